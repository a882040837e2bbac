# rate_limiter.py - request quotas for the public API gateway (legacy platform).
# Fixed one-minute windows per client, aligned to the wall-clock minute.
# Entry point: dispatch(action, payload) -> (http_status, dict)
import math
import time

PLANS = {"free": 10, "pro": 100, "internal": None}   # requests per window; None = no limit
DEFAULT_PLAN = "free"
WINDOW = 60          # seconds
MAX_COST = 10        # an expensive call may count as up to 10 requests

CLIENT_PLAN = {}     # client id -> plan name
WINDOWS = {}         # client id -> {"start": t, "used": n, "warned": bool}
ALERTS = []          # read by the abuse dashboard


def set_plan(p):
    client, plan = p["client_id"], p["plan"]
    if plan not in PLANS:
        raise Exception("unknown plan %s" % plan)
    CLIENT_PLAN[client] = plan
    print("plan of %s is now %s" % (client, plan))
    return {"client_id": client, "plan": plan}


def _window(client, now):
    start = now - (now % WINDOW)
    w = WINDOWS.get(client)
    if w is None or w["start"] != start:
        w = {"start": start, "used": 0, "warned": False}
        WINDOWS[client] = w
    return w


def check(p):
    client = p["client_id"]
    cost = p.get("cost", 1)
    if cost < 1 or cost > MAX_COST:
        raise Exception("cost must be 1..%d" % MAX_COST)
    plan = CLIENT_PLAN.get(client, DEFAULT_PLAN)
    limit = PLANS[plan]
    if limit is None:
        return {"allowed": True, "remaining": None, "retry_after": 0, "limit": None}
    now = time.time()
    w = _window(client, now)
    if w["used"] + cost > limit:
        if not w["warned"]:
            w["warned"] = True
            print("RATE LIMIT: %s exceeded %d/min on plan %s" % (client, limit, plan))
            ALERTS.append({"client_id": client, "plan": plan, "limit": limit})
        retry = int(math.ceil(w["start"] + WINDOW - now))
        return {"allowed": False, "remaining": limit - w["used"], "retry_after": retry, "limit": limit}
    w["used"] = w["used"] + cost
    return {"allowed": True, "remaining": limit - w["used"], "retry_after": 0, "limit": limit}


def usage(p):
    client = p["client_id"]
    plan = CLIENT_PLAN.get(client, DEFAULT_PLAN)
    w = _window(client, time.time())
    return {"client_id": client, "plan": plan, "used": w["used"], "limit": PLANS[plan],
            "window_start": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(w["start"]))}


def reset(p):
    if p["client_id"] in WINDOWS:
        del WINDOWS[p["client_id"]]
    return usage(p)


ACTIONS = {"set_plan": set_plan, "check": check, "usage": usage, "reset": reset}


def dispatch(action, payload):
    if action not in ACTIONS:
        return 404, {"error": "unknown action"}
    try:
        result = ACTIONS[action](payload)
    except Exception as e:
        return 400, {"error": str(e)}
    if action == "check" and not result["allowed"]:
        return 429, result
    return 200, result
