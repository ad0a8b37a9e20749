"""Fault injection with the request shape of LocalStack's (paid) Chaos API.

``/_localstack/chaos/faults`` holds an ordered list of rules::

    {"service": "dynamodb", "operation": "PutItem", "region": "us-east-1", "probability": 0.5,
     "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}}

Every field is optional; a missing field matches anything. ``probability`` defaults to 1 and
``error`` to ``{"statusCode": 503, "code": "ServiceUnavailable"}``. The first matching rule wins.
GET reads the list, POST replaces it, PATCH appends rules, DELETE removes the rules given
(equal as JSON), and POSTing ``[]`` clears it. ``/_localstack/chaos/effects`` holds
``{"latency": ms}``, a delay added before every AWS request is served.

The check sits in LocalStack's request handler chain after the request is parsed, so it applies to
every AWS request LocalStack serves: calls from outside, and the internal ones, such as Step
Functions invoking Lambda or calling an ``aws-sdk:*`` integration.
"""

import json
import logging
import random
import threading
import time

from localstack.aws.api import CommonServiceException, RequestContext
from localstack.aws.handlers import serve_custom_service_request_handlers
from localstack.http import Request, Resource, Response
from localstack.services.internal import get_internal_apis
from rolo import Response as ChainResponse  # the type LocalStack's handler chain declares
from rolo.gateway import HandlerChain

LOG = logging.getLogger(__name__)

DEFAULT_ERROR = {"statusCode": 503, "code": "ServiceUnavailable"}
RULE_KEYS = {"service", "operation", "region", "probability", "error", "description"}


class InvalidRule(ValueError):
    """A rule that does not have the documented shape."""


def validate_rules(data) -> list[dict]:
    """Checks a request body and returns the rules it holds, or raises InvalidRule."""
    if not isinstance(data, list):
        raise InvalidRule("expected a JSON list of fault rules")
    for rule in data:
        if not isinstance(rule, dict):
            raise InvalidRule(f"a rule must be a JSON object, got {rule!r}")
        unknown = set(rule) - RULE_KEYS
        if unknown:
            raise InvalidRule(f"unknown rule field(s): {', '.join(sorted(unknown))}")
        probability = rule.get("probability", 1)
        if not isinstance(probability, (int, float)) or not 0 <= probability <= 1:
            raise InvalidRule(f"probability must be a number in [0, 1], got {probability!r}")
        error = rule.get("error", DEFAULT_ERROR)
        if not isinstance(error, dict) or not set(error) <= {"statusCode", "code", "message"}:
            raise InvalidRule("error must be {statusCode, code[, message]}")
        status = error.get("statusCode", DEFAULT_ERROR["statusCode"])
        if not isinstance(status, int) or not 400 <= status <= 599:
            raise InvalidRule(f"error.statusCode must be an HTTP error status, got {status!r}")
    return data


def matches(rule: dict, service: str, operation: str, region: str) -> bool:
    """True when every field the rule names equals the request's (service case-insensitively)."""
    if "service" in rule and rule["service"].lower() != service.lower():
        return False
    if "operation" in rule and rule["operation"] != operation:
        return False
    return "region" not in rule or rule["region"] == region


class Chaos:
    """The active rules and effects, shared by the HTTP resources and the request handler."""

    def __init__(self, rng: random.Random | None = None):
        self._lock = threading.Lock()
        self._rules: list[dict] = []
        self._latency_ms = 0
        self._rng = rng or random.Random()

    # rules
    def rules(self) -> list[dict]:
        with self._lock:
            return list(self._rules)

    def replace(self, rules: list[dict]) -> list[dict]:
        with self._lock:
            self._rules = list(rules)
            return list(self._rules)

    def add(self, rules: list[dict]) -> list[dict]:
        with self._lock:
            self._rules.extend(rules)
            return list(self._rules)

    def remove(self, rules: list[dict]) -> list[dict]:
        with self._lock:
            self._rules = [r for r in self._rules if r not in rules]
            return list(self._rules)

    # effects
    def effects(self) -> dict:
        with self._lock:
            return {"latency": self._latency_ms}

    def set_effects(self, effects: dict) -> dict:
        latency = effects.get("latency", 0)
        if not isinstance(latency, int) or latency < 0:
            raise InvalidRule(f"latency must be a non-negative integer (ms), got {latency!r}")
        with self._lock:
            self._latency_ms = latency
            return {"latency": self._latency_ms}

    def fault_for(self, service: str, operation: str, region: str) -> dict | None:
        """The error to answer with, or None: the first matching rule decides, by its odds."""
        with self._lock:
            for rule in self._rules:
                if matches(rule, service, operation, region):
                    if self._rng.random() < rule.get("probability", 1):
                        return rule.get("error", DEFAULT_ERROR)
                    return None
        return None

    # the request handler
    def __call__(
        self, chain: HandlerChain[RequestContext], context: RequestContext, response: ChainResponse
    ) -> None:
        if context.service is None or context.operation is None:
            return
        latency = self._latency_ms
        if latency:
            time.sleep(latency / 1000)
        error = self.fault_for(
            context.service.service_name, context.operation.name, context.region or ""
        )
        if error is None:
            return
        code = error.get("code", DEFAULT_ERROR["code"])
        LOG.info(
            "chaos: failing %s.%s in %s with %s",
            context.service.service_name,
            context.operation.name,
            context.region,
            code,
        )
        raise CommonServiceException(
            code=code,
            message=error.get("message", "Operation failed due to a simulated fault"),
            status_code=error.get("statusCode", DEFAULT_ERROR["statusCode"]),
            sender_fault=error.get("statusCode", 503) < 500,
        )


def _json(data, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, mimetype="application/json")


def _body(request: Request):
    try:
        return json.loads(request.get_data() or b"null")
    except ValueError as e:
        raise InvalidRule(f"body is not JSON: {e}") from e


class FaultsResource:
    def __init__(self, chaos: Chaos):
        self.chaos = chaos

    def _change(self, request: Request, apply) -> Response:
        try:
            return _json(apply(validate_rules(_body(request))))
        except InvalidRule as e:
            return _json({"error": "InvalidRule", "message": str(e)}, status=400)

    def on_get(self, request: Request):
        return _json(self.chaos.rules())

    def on_post(self, request: Request):
        return self._change(request, self.chaos.replace)

    def on_patch(self, request: Request):
        return self._change(request, self.chaos.add)

    def on_delete(self, request: Request):
        return self._change(request, self.chaos.remove)


class EffectsResource:
    def __init__(self, chaos: Chaos):
        self.chaos = chaos

    def on_get(self, request: Request):
        return _json(self.chaos.effects())

    def on_post(self, request: Request):
        try:
            body = _body(request)
            if not isinstance(body, dict):
                raise InvalidRule('expected a JSON object like {"latency": 100}')
            return _json(self.chaos.set_effects(body))
        except InvalidRule as e:
            return _json({"error": "InvalidRule", "message": str(e)}, status=400)

    on_put = on_post

    def on_delete(self, request: Request):
        return _json(self.chaos.set_effects({"latency": 0}))


CHAOS = Chaos()


def install() -> None:
    """Adds the HTTP resources and the request handler (called once, at LocalStack start)."""
    apis = get_internal_apis()
    apis.add(Resource("/_localstack/chaos/faults", FaultsResource(CHAOS)))
    apis.add(Resource("/_localstack/chaos/effects", EffectsResource(CHAOS)))
    serve_custom_service_request_handlers.append(CHAOS)
    LOG.info("docket chaos API installed at /_localstack/chaos/{faults,effects}")
