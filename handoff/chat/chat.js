// What both chat pages do alike (templates/page.html, and templates/demo.html: the lab's demo app as it was):
// call the server, show a message, say what went wrong, and log in.
const $ = (id) => document.getElementById(id);

async function call(method, path, body) {
  const response = await fetch(path, {method, headers: {"Content-Type": "application/json"},
                                      body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(data.error || response.statusText), {status: response.status});
  return data;
}

function line(role, text) {
  const shown = document.createElement("div");
  shown.className = "message " + role;
  shown.textContent = text;
  $("messages").append(shown);
}

// What went wrong, on the page; its status (403 not yours, 409 busy, 502 the server
// failed) in data-status, for whoever drives the page.
function notice(error) {
  $("notice").textContent = `refused: ${error.message}`;
  $("notice").dataset.status = error.status;
}

// The page's own start once someone is logged in: shown the login form until then.
async function loggedIn(start) {
  let me;
  try { me = await call("GET", "/api/me"); } catch (error) {
    $("login").hidden = false;
    return;
  }
  $("who").textContent = `${me.user} · ${me.model}`;
  $("chat").hidden = false;
  await start();
}

function logInThen(start) {
  $("login").onsubmit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    try {
      await call("POST", "/api/login", {user: form.get("user"), password: form.get("password")});
      $("login").hidden = true;
      await loggedIn(start);
    } catch (error) {
      $("login-error").textContent = error.message;
    }
  };
  loggedIn(start);
}
