# Follows an account's changes live, as server-sent events: each change as soon as it is committed.
# The cursor is kept in a file; a reconnection sends it as Last-Event-ID, and resumes after it.
import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

FEED_URL = os.environ.get("PREQUAL_FEED_URL", "http://127.0.0.1:8787") + "/changes"
TOKEN = os.environ["PREQUAL_FEED_TOKEN"]
ACCOUNT = os.environ.get("PREQUAL_ACCOUNT", "default")
CURSOR_FILE = os.environ.get("PREQUAL_CURSOR_FILE", "prequal-feed.cursor")


def read_cursor():
    """The seq of the last change applied; None the first time."""
    try:
        with open(CURSOR_FILE) as file:
            return int(file.read())
    except FileNotFoundError:
        return None


def save_cursor(seq):
    # Written aside, then renamed over the old one: a crash leaves one or the other, never half.
    with open(CURSOR_FILE + ".new", "w") as file:
        file.write(str(seq))
    os.replace(CURSOR_FILE + ".new", CURSOR_FILE)


def apply(change):
    # Your system's work, as in the page loop: upsert the row, or delete the candidate on "erase".
    print("applied", change["seq"], change["entity"], change["id"], change["op"])


def read_state_again(why):
    # Changes before the cursor are missing: copy the projected state, then go on from the cursor.
    print("reading the state again:", why)


def events(stream):
    """The events of a text/event-stream answer as they come, each a dict of its fields."""
    event = {}
    for raw in stream:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":  # a blank line ends an event
            if "data" in event:
                yield event
            event = {}
        elif not line.startswith(":"):  # ":" starts a comment, such as the keep-alive
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data" and "data" in event:  # data on several lines is one value
                value = event["data"] + "\n" + value
            event[name] = value


def follow():
    last = read_cursor()
    while True:
        headers = {"Authorization": "Bearer " + TOKEN, "Accept": "text/event-stream"}
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        query = urllib.parse.urlencode({"account": ACCOUNT})
        request = urllib.request.Request(FEED_URL + "?" + query, headers=headers)
        try:
            # A keep-alive comes every 15 s: a minute without a byte is a connection lost.
            with urllib.request.urlopen(request, timeout=60) as stream:
                for event in events(stream):
                    if event.get("event") == "error":
                        break  # the reconnection's answer says what happened (410 or 409)
                    change = json.loads(event["data"])
                    if last is None and change["seq"] > 1:
                        read_state_again("retention dropped the oldest changes")
                    apply(change)
                    last = change["seq"]
                    save_cursor(last)
        except urllib.error.HTTPError as error:
            if error.code not in (409, 410, 503):
                raise  # 401, 403, 404: a token or an account to fix
            body = json.load(error)
            if error.code == 503:  # too many streams, or serve is starting or stopping
                time.sleep(int(error.headers.get("Retry-After", "5")))
                continue
            read_state_again(body["error"]["message"])
            last = body["head"] if error.code == 409 else body["oldest"] - 1
            save_cursor(last)
            continue
        except (OSError, http.client.HTTPException):
            pass  # refused, cut or silent: connect again
        time.sleep(1)


follow()
