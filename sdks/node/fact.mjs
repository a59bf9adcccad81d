// The two prompts that carry a scenario's fact, as handoff/fact.py words them: the witness
// model recognises exactly these sentences, so a worker in any language must send them
// byte for byte. tests/unit/test_node_worker.py checks them against fact.py's.

export function quote(value) {
  return value.replaceAll("\\", "\\\\").replaceAll("'", "\\'");
}

export function rememberPrompt(topic, value) {
  return `Remember this: my favourite ${topic} is '${quote(value)}'. Reply with just OK.`;
}

export function questionPrompt(topic) {
  return `Which ${topic} did I say was my favourite?`;
}
