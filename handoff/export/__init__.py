"""Exports: what a scenario becomes elsewhere (k8s.py: Kubernetes manifests)."""
