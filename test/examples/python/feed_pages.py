# Applies an account's changes page by page, keeping the cursor in a file: each run reads what came
# since the last one until it has caught up, then ends (run it every minute, from cron or a timer).
import json
import os
import urllib.error
import urllib.parse
import urllib.request

FEED_URL = os.environ.get("PREQUAL_FEED_URL", "http://127.0.0.1:8787") + "/changes"
TOKEN = os.environ["PREQUAL_FEED_TOKEN"]
ACCOUNT = os.environ.get("PREQUAL_ACCOUNT", "default")
CURSOR_FILE = os.environ.get("PREQUAL_CURSOR_FILE", "prequal-feed.cursor")
LIMIT = 500


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
    # Your system's work: upsert change["row"] as the entity change["entity"] whose key is
    # change["id"], or delete the candidate on an "erase". An upsert carries the whole row, so
    # applying a change twice is harmless. Best: store change["seq"] in the same transaction.
    print("applied", change["seq"], change["entity"], change["id"], change["op"])


def read_state_again(why):
    # Changes before the cursor are missing: copy the projected state (the queries, or the
    # service's API), dropping what it no longer holds, then go on from the new cursor.
    print("reading the state again:", why)


def read_page(after):
    query = {"account": ACCOUNT, "limit": LIMIT}
    if after is not None:
        query["after"] = after
    request = urllib.request.Request(
        FEED_URL + "?" + urllib.parse.urlencode(query),
        headers={"Authorization": "Bearer " + TOKEN},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def sync():
    after = read_cursor()
    while True:
        try:
            page = read_page(after)
        except urllib.error.HTTPError as error:
            if error.code not in (409, 410):
                raise  # 401, 403, 404: a token or an account to fix; 503: try at the next run
            body = json.load(error)
            read_state_again(body["error"]["message"])
            # 409: the database was restored from a backup older than the cursor: go on from its
            # last change. 410: retention dropped changes the cursor had not reached.
            after = body["head"] if error.code == 409 else body["oldest"] - 1
            save_cursor(after)
            continue
        changes = page["changes"]
        first = changes[0]["seq"] if changes else page["next"] + 1
        if after is None and first > 1:
            read_state_again("retention dropped the oldest changes")
        for change in changes:
            apply(change)
            save_cursor(change["seq"])
        after = page["next"]
        if len(changes) < LIMIT:  # caught up, for now
            save_cursor(after)
            return


sync()
