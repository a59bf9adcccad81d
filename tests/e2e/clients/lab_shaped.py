"""A client shaped like the lab's sample, as a learner writes it: a zero-argument
``CopilotClient()`` (the runtime, the Copilot API and the token come from the
environment), the model picked from ``list_models()`` as the sample picks it, and in a
second process ``resume_session(id)`` with no model. Nothing of the tool is imported.

    python lab_shaped.py create SESSION_ID PROMPT
    python lab_shaped.py resume SESSION_ID PROMPT
"""

import asyncio
import sys

from copilot import CopilotClient, PermissionHandler

PREFERRED = "claude-haiku-4.5"


async def main(mode: str, session_id: str, prompt: str) -> None:
    client = CopilotClient()
    await client.start()
    try:
        if mode == "create":
            models = [model.id for model in await client.list_models()]
            print("Models:", ", ".join(models))
            model = PREFERRED if PREFERRED in models else next(m for m in models if m != "auto")
            print("Model:", model)
            session = await client.create_session(session_id=session_id, model=model,
                                                  on_permission_request=PermissionHandler.approve_all)
        else:
            session = await client.resume_session(session_id, on_permission_request=PermissionHandler.approve_all)
        reply = await session.send_and_wait(prompt)
        print("Reply:", reply.data.content if reply else None)
        await session.disconnect()
    finally:
        await client.stop()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
