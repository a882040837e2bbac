# users.py - user accounts for the old community site.
# Entry point: dispatch(action, payload) -> (http_status, dict)
import re
import time

USERS = {}        # user id -> user dict
BY_EMAIL = {}     # lowercased email -> user id
SEQ = [0]

EMAIL_RE = re.compile(r"^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$")
MAX_EMAIL = 254
NAME_MIN = 2
NAME_MAX = 40
RESERVED = ["admin", "root", "support", "nimbus"]
REASONS = ["user_request", "abuse", "inactivity"]
GRACE_DAYS = 30   # a deactivated account can come back within this many days (not after abuse)
DAY = 86400


def clean_email(email):
    email = email.strip().lower()
    if len(email) > MAX_EMAIL or not EMAIL_RE.match(email):
        raise Exception("invalid email: %s" % email)
    return email


def clean_name(name):
    name = " ".join(name.split())          # trim and collapse inner whitespace
    if len(name) < NAME_MIN or len(name) > NAME_MAX:
        raise Exception("name must be %d-%d characters" % (NAME_MIN, NAME_MAX))
    if name.lower() in RESERVED:
        raise Exception("name %s is reserved" % name)
    return name


def get(p):
    uid = p["user_id"]
    if uid not in USERS:
        raise Exception("not found: user %s" % uid)
    return USERS[uid]


def register(p):
    email = clean_email(p["email"])
    name = clean_name(p["name"])
    if email in BY_EMAIL:
        raise Exception("bad state: email %s already registered" % email)
    SEQ[0] += 1
    uid = "usr-%04d" % SEQ[0]
    USERS[uid] = {"id": uid, "email": email, "name": name, "status": "active",
                  "created": time.time(), "deactivated": None, "reason": None}
    BY_EMAIL[email] = uid
    print("new user %s <%s>" % (uid, email))
    return USERS[uid]


def find(p):
    email = p["email"].strip().lower()
    if email not in BY_EMAIL:
        raise Exception("not found: email %s" % email)
    return USERS[BY_EMAIL[email]]


def rename(p):
    u = get(p)
    if u["status"] != "active":
        raise Exception("bad state: user %s is %s" % (u["id"], u["status"]))
    u["name"] = clean_name(p["name"])
    return u


def deactivate(p):
    u = get(p)
    reason = p.get("reason", "")
    if reason not in REASONS:
        raise Exception("reason must be one of %s" % ", ".join(REASONS))
    if u["status"] != "active":
        raise Exception("bad state: user %s is already %s" % (u["id"], u["status"]))
    u["status"] = "deactivated"
    u["deactivated"] = time.time()
    u["reason"] = reason
    print("deactivated %s (%s)" % (u["id"], reason))
    return u


def reactivate(p):
    u = get(p)
    if u["status"] != "deactivated":
        raise Exception("bad state: user %s is %s" % (u["id"], u["status"]))
    if u["reason"] == "abuse":
        raise Exception("bad state: user %s was banned" % u["id"])
    if time.time() - u["deactivated"] > GRACE_DAYS * DAY:
        raise Exception("bad state: grace period over for %s" % u["id"])
    u["status"] = "active"
    u["deactivated"] = None
    u["reason"] = None
    return u


ACTIONS = {"register": register, "get": get, "find": find, "rename": rename,
           "deactivate": deactivate, "reactivate": reactivate}


def dispatch(action, payload):
    if action not in ACTIONS:
        return 404, {"error": "unknown action"}
    try:
        result = ACTIONS[action](payload)
    except Exception as e:
        msg = str(e)
        if msg.startswith("not found"):
            return 404, {"error": msg}
        if msg.startswith("bad state"):
            return 409, {"error": msg}
        return 400, {"error": msg}
    return (201 if action == "register" else 200), result
