// The `eventlog` event: a session's events.jsonl summarised as handoff/eventlog.py's
// report() summarises it, so the checker reads the same evidence whichever language ran
// the step. tests/e2e/test_node_worker.py compares the two on the same log.

function typed(value, kind) {
  if (kind === "int") return Number.isInteger(value) ? value : null;
  return typeof value === kind ? value : null;
}

function dataOf(event) {
  const data = event.data;
  return data && typeof data === "object" && !Array.isArray(data) ? data : {};
}

function timestamp(event) {
  const text = typed(event.timestamp, "string");
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

// Lines are cut at "\n" only, as the runtime cuts them; a line that is not a JSON object
// (a torn write) is counted, never fatal.
export function parseEvents(text) {
  const events = [];
  let unreadable = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const event = JSON.parse(line);
      if (event && typeof event === "object" && !Array.isArray(event)) events.push(event);
      else unreadable += 1;
    } catch {
      unreadable += 1;
    }
  }
  return [events, unreadable];
}

export function report(sessionId, text, t) {
  if (text === null) return { event: "eventlog", t, session_id: sessionId, found: false };
  const [events, unreadable] = parseEvents(text);
  const resumes = [];
  let shutdownSinceOpen = false;
  let prompt = null, reply = null, promptedAt = null, repliedAt = null, messages = 0;
  events.forEach((event, position) => {
    const data = dataOf(event);
    if (event.type === "session.shutdown") shutdownSinceOpen = true;
    else if (event.type === "session.start") shutdownSinceOpen = false;
    else if (event.type === "session.resume") {
      resumes.push({ eventCount: typed(data.eventCount, "int"), alreadyInUse: typed(data.alreadyInUse, "boolean"),
                     closedBefore: shutdownSinceOpen, eventsBefore: position, messagesBefore: messages });
      shutdownSinceOpen = false;
    } else if (event.type === "user.message") {
      prompt = typed(data.content, "string");
      reply = null;
      promptedAt = timestamp(event);
      repliedAt = null;
      messages += 1;
    } else if (event.type === "assistant.message" && typed(data.content, "string")) {
      reply = data.content;
      repliedAt = timestamp(event);
    }
  });
  const children = new Map();
  for (const event of events) {
    const parent = typed(event.parentId, "string");
    if (parent) children.set(parent, (children.get(parent) ?? 0) + 1);
  }
  const firstStart = events.find((e) => e.type === "session.start");
  const last = resumes.at(-1) ?? null;
  return {
    event: "eventlog", t, session_id: sessionId, found: true, events: events.length,
    starts: events.filter((e) => e.type === "session.start").length, resumes: resumes.length,
    closed_before_resume: last ? last.closedBefore : null,
    resume_event_count: last ? last.eventCount : null,
    already_in_use: last ? last.alreadyInUse : null,
    branch_points: [...children.values()].filter((count) => count > 1).length,
    unreadable_lines: unreadable,
    created_by: firstStart ? typed(dataOf(firstStart).copilotVersion, "string") : null,
    events_before_resume: last ? last.eventsBefore : null,
    last_prompt: prompt, last_reply: reply,
    last_reply_ms: reply !== null && promptedAt !== null && repliedAt !== null ? repliedAt - promptedAt : null,
    messages_before_resume: last ? last.messagesBefore : null,
  };
}
