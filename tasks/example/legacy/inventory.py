# inventory.py - warehouse stock levels and order holds (legacy platform)
# Entry point: dispatch(action, payload) -> (http_status, dict)
# A "hold" reserves units for an order until it is committed (shipped) or released.
import time

STOCK = {}            # sku -> {"on_hand": n, "reserved": n}
HOLDS = {}            # hold id -> hold dict
COUNTER = {"holds": 0}
NOTIFICATIONS = []    # picked up by the purchasing cron job

MAX_ON_HAND = 10000   # shelf space per sku
MAX_RECEIPT = 1000    # units per delivery
MAX_PER_HOLD = 50
LOW_STOCK_AT = 5      # notify purchasing when available drops to this or below
HOLD_SECONDS = 15 * 60


def level(p):
    sku = p["sku"]
    if sku not in STOCK:
        raise Exception("not found: sku %s" % sku)
    row = STOCK[sku]
    return {"sku": sku, "on_hand": row["on_hand"], "reserved": row["reserved"],
            "available": row["on_hand"] - row["reserved"]}


def receive(p):
    sku, qty = p["sku"], p["qty"]
    if qty < 1 or qty > MAX_RECEIPT:
        raise Exception("qty must be 1..%d" % MAX_RECEIPT)
    row = STOCK.get(sku, {"on_hand": 0, "reserved": 0})
    if row["on_hand"] + qty > MAX_ON_HAND:
        raise Exception("bad state: no shelf space for %d more %s" % (qty, sku))
    row["on_hand"] = row["on_hand"] + qty
    STOCK[sku] = row
    print("[inventory] received %d x %s, on hand %d" % (qty, sku, row["on_hand"]))
    return level({"sku": sku})


def reserve(p):
    order_id, sku, qty = p["order_id"], p["sku"], p["qty"]
    if qty < 1 or qty > MAX_PER_HOLD:
        raise Exception("qty must be 1..%d" % MAX_PER_HOLD)
    available = level({"sku": sku})["available"]
    for h in HOLDS.values():
        if h["order_id"] == order_id and h["sku"] == sku and h["status"] == "held":
            raise Exception("bad state: order %s already holds %s" % (order_id, sku))
    if qty > available:
        raise Exception("bad state: only %d %s available" % (available, sku))
    STOCK[sku]["reserved"] += qty
    COUNTER["holds"] += 1
    hid = "hold-%04d" % COUNTER["holds"]
    HOLDS[hid] = {"id": hid, "order_id": order_id, "sku": sku, "qty": qty,
                  "status": "held", "at": time.time()}
    print("[inventory] %s holds %d x %s for %s" % (hid, qty, sku, order_id))
    if available - qty <= LOW_STOCK_AT:
        print("[inventory] WARNING low stock %s" % sku)
        NOTIFICATIONS.append({"type": "low_stock", "sku": sku, "available": available - qty})
    return HOLDS[hid]


def _held(hid):
    if hid not in HOLDS:
        raise Exception("not found: hold %s" % hid)
    h = HOLDS[hid]
    if h["status"] != "held":
        raise Exception("bad state: hold %s is %s" % (hid, h["status"]))
    return h


def _let_go(h, status):
    STOCK[h["sku"]]["reserved"] -= h["qty"]
    h["status"] = status
    NOTIFICATIONS.append({"type": "released", "hold": h["id"], "sku": h["sku"], "qty": h["qty"],
                          "reason": status})


def release(p):
    h = _held(p["hold_id"])
    _let_go(h, "released")
    return h


def commit(p):
    h = _held(p["hold_id"])
    if time.time() - h["at"] >= HOLD_SECONDS:
        raise Exception("bad state: hold %s expired" % h["id"])
    STOCK[h["sku"]]["on_hand"] -= h["qty"]
    STOCK[h["sku"]]["reserved"] -= h["qty"]
    h["status"] = "committed"
    return h


def expire(p):
    now = time.time()
    gone = []
    for hid in sorted(HOLDS):
        h = HOLDS[hid]
        if h["status"] == "held" and now - h["at"] >= HOLD_SECONDS:
            _let_go(h, "expired")
            gone.append(hid)
    return {"expired": gone}


ACTIONS = {"level": level, "receive": receive, "reserve": reserve, "release": release,
           "commit": commit, "expire": expire}


def dispatch(action, payload):
    if action not in ACTIONS:
        return 404, {"error": "unknown action %s" % action}
    try:
        return (201 if action == "reserve" else 200), ACTIONS[action](payload)
    except KeyError as e:
        return 400, {"error": "missing field %s" % e}
    except Exception as e:
        msg = str(e)
        code = 404 if msg.startswith("not found") else 409 if msg.startswith("bad state") else 400
        return code, {"error": msg}
