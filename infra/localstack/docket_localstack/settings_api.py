"""An internal HTTP resource for a piece of the emulator's settings: GET reads them (and what
was counted), POST changes them, DELETE resets the counters. Used by the Textract quotas
(``/_docket/textract/quotas``) and scale runs (``/_docket/textract/scale``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class InvalidSetting(ValueError):
    """A settings change that does not have the documented shape."""


def json_response(data: Any, status: int = 200):
    from localstack.http import Response

    return Response(json.dumps(data), status=status, mimetype="application/json")


class SettingsResource:
    def __init__(
        self,
        view: Callable[[], dict],
        configure: Callable[[object], dict],
        reset: Callable[[], dict],
    ):
        self.view, self.configure, self.reset = view, configure, reset

    def on_get(self, request):
        return json_response(self.view())

    def on_post(self, request):
        try:
            return json_response(self.configure(json.loads(request.get_data() or b"null")))
        except (ValueError, InvalidSetting) as e:
            return json_response({"error": "InvalidSetting", "message": str(e)}, status=400)

    def on_delete(self, request):
        return json_response(self.reset())


def install(path: str, view, configure, reset) -> None:
    """Adds the resource at `path` (called once, at LocalStack start)."""
    from localstack.http import Resource
    from localstack.services.internal import get_internal_apis

    get_internal_apis().add(Resource(path, SettingsResource(view, configure, reset)))
