"""`handoff chat`: the lab's demo app done the way its last step says, a web chat whose
browser keeps only the session id while the conversation lives in the server's session
store, resumed by id on every turn behind the guard."""
