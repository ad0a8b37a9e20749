"""IAM auth (``AuthType: AWS_IAM``) for Lambda function URLs, which LocalStack does not emulate.

LocalStack 2026.3 serves function URLs (``localstack.services.lambda_.urlrouter``) but ignores
their AuthType: it invokes the function for any request and builds an event without
``requestContext.authorizer``. For URLs whose config says ``AWS_IAM`` (``NONE`` URLs are left
exactly as LocalStack serves them), this module makes it behave like AWS:

- a request without an ``Authorization`` header, or with one that is not
  ``AWS4-HMAC-SHA256 Credential=<AKID>/<yyyymmdd>/<region>/lambda/aws4_request,
  SignedHeaders=...,Signature=<64 hex>``, is answered 403 ``{"Message":"Forbidden"}`` and the
  function is not invoked. So is one signed for another region than the URL's, one whose signed
  headers do not include ``host``, and one made with a temporary key (``ASIA``/``LSIA``) that
  LocalStack's STS does not know, that expired, or whose ``X-Amz-Security-Token`` is not the
  session token STS issued with it (what AWS rejects too, and a client bug worth seeing locally);
- otherwise the access key id is resolved to its principal with LocalStack's own STS
  ``GetCallerIdentity`` (``StsProvider.get_caller_identity``: keys of ``AssumeRole`` /
  ``GetSessionToken`` sessions, then IAM users' access keys, else the root of the account the key
  belongs to, e.g. ``arn:aws:iam::000000000000:root`` for the default ``test`` key), and the event
  gets what AWS puts there::

      "requestContext": {"accountId": "<caller's account>", ...,
          "authorizer": {"iam": {"accessKey": "<AKID>", "accountId": "<caller's account>",
              "callerId": "<UserId>", "cognitoIdentity": null, "principalOrgId": null,
              "userArn": "<Arn>", "userId": "<UserId>"}}}

**Signatures are not verified**: LocalStack does not know the secrets of real keys and accepts any
secret for its own, so a request with a well-formed SigV4 header is trusted as coming from the key
it names. IAM policies are not evaluated either (neither the caller's ``lambda:InvokeFunctionUrl``
permission nor the function's resource policy): LocalStack does not enforce IAM.

Calling an IAM-auth URL locally: connect to LocalStack's gateway (``http://127.0.0.1:<port>``),
and send and sign the request with the URL's own host, ``Host:
<url-id>.lambda-url.<region>.localhost.localstack.cloud:<port>`` (the host of the ``FunctionUrl``
that ``CreateFunctionUrlConfig`` returns, port included), service ``lambda``, the URL's region.

URL-only functions: on AWS a function whose resource policy lets callers invoke it only with the
condition ``lambda:InvokedViaFunctionUrl: true`` (``AWS::Lambda::Permission`` with
``InvokedViaFunctionUrl: true``) refuses a direct ``lambda:Invoke`` from those callers with
``AccessDeniedException`` (403), while its URL still invokes it. LocalStack drops that property
(its CloudFormation provider passes only FunctionName, Action, Principal and SourceArn to
AddPermission, and AddPermission ignores ``InvokedViaFunctionUrl`` and ``FunctionUrlAuthType``).
This module puts the conditions AWS would write into the stored statement (so ``GetPolicy``
shows them) and refuses a direct Invoke, InvokeAsync or InvokeWithResponseStream of any function
that has such a statement. As LocalStack evaluates no identity policy, every direct caller is
refused, as on AWS a caller whose only grant is that statement (a reviewer) is; on AWS a principal
of the account whose *own* policy grants ``lambda:InvokeFunction`` on the function (an
administrator) can still invoke it directly.

How it hooks in: ``install()`` replaces ``urlrouter.event_for_lambda_url``, which
``FunctionUrlRouter.handle_lambda_url_invocation`` looks up at every call after it found the URL
config and before it invokes the function. Patching the handler method itself would not work
reliably: with ``EAGER_SERVICE_LOADING`` the Lambda provider registers its routes (binding the
method) in an ``on_infra_start`` hook that may run before ours. A refusal is raised as
``FunctionUrlForbidden`` and turned into the 403 by an exception handler added to
``serve_custom_exception_handlers`` (function URLs are served by the edge router, before LocalStack
parses an AWS service, so no AWS error serializer touches the response). No LocalStack file is
changed.
"""

import dataclasses
import hmac
import logging
import re
from typing import NoReturn

from localstack.aws.api import RequestContext, ServiceException
from localstack.http import Request, Response
from rolo import Response as ChainResponse  # the type LocalStack's handler chain declares
from rolo.gateway import HandlerChain

LOG = logging.getLogger(__name__)

FORBIDDEN_BODY = '{"Message":"Forbidden"}'

# What AWS SigV4 clients (botocore, aws-sigv4) send; LocalStack's own parser
# (request_context.extract_access_key_id_from_auth_header) is far more lenient.
_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 "
    r"Credential=(?P<access_key_id>[^/\s,]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/lambda/aws4_request,\s*"
    r"SignedHeaders=(?P<signed_headers>[a-z0-9-]+(?:;[a-z0-9-]+)*),\s*"
    r"Signature=(?P<signature>[0-9a-f]{64})"
)
_URL_HOST = re.compile(r"[^.]+\.lambda-url\.(?P<region>[a-z0-9-]+)\.", re.IGNORECASE)
_TEMPORARY_KEY_PREFIXES = ("ASIA", "LSIA")


@dataclasses.dataclass(frozen=True)
class SigV4Authorization:
    access_key_id: str
    date: str
    region: str
    signed_headers: tuple[str, ...]
    signature: str


class FunctionUrlForbidden(ServiceException):
    """A refused call of an IAM-auth function URL (a ServiceException: LocalStack logs no error)."""

    code = "AccessDeniedException"
    status_code = 403
    sender_fault = True


def parse_authorization(value: str | None) -> SigV4Authorization | None:
    """The parts of a SigV4 ``Authorization`` header for service ``lambda``, or None."""
    match = _AUTHORIZATION.fullmatch((value or "").strip())
    if match is None:
        return None
    return SigV4Authorization(
        access_key_id=match["access_key_id"],
        date=match["date"],
        region=match["region"],
        signed_headers=tuple(match["signed_headers"].split(";")),
        signature=match["signature"],
    )


def url_region(host: str) -> str | None:
    """The region in a function URL host (``<id>.lambda-url.<region>.<server>``)."""
    match = _URL_HOST.match(host or "")
    return match["region"].lower() if match else None


def is_temporary_key(access_key_id: str) -> bool:
    return access_key_id.startswith(_TEMPORARY_KEY_PREFIXES)


def refusal(
    auth: SigV4Authorization | None, region: str, temporary_credentials, session_token: str | None
) -> str | None:
    """Why a call of an IAM-auth URL in ``region`` is refused, or None when it is let through.

    ``temporary_credentials`` is what LocalStack's STS holds for the key (None if nothing),
    ``session_token`` the request's ``X-Amz-Security-Token``.
    """
    if auth is None:
        return "no SigV4 Authorization header for service lambda"
    if auth.region != region:
        return f"signed for region {auth.region}, the URL is in {region}"
    if "host" not in auth.signed_headers:
        return "the host header is not signed"
    if temporary_credentials is not None:
        if temporary_credentials.is_expired():
            return f"the temporary credentials of {auth.access_key_id} expired"
        if not session_token or not hmac.compare_digest(
            session_token.encode(), temporary_credentials.session_token.encode()
        ):
            return f"X-Amz-Security-Token is not the session token of {auth.access_key_id}"
    elif is_temporary_key(auth.access_key_id):
        return f"temporary key {auth.access_key_id} is unknown to STS"
    return None


def iam_authorizer(access_key_id: str, identity) -> dict:
    """The ``requestContext.authorizer.iam`` block for a GetCallerIdentity result."""
    return {
        "accessKey": access_key_id,
        "accountId": identity["Account"],
        "callerId": identity["UserId"],
        "cognitoIdentity": None,
        "principalOrgId": None,
        "userArn": identity["Arn"],
        "userId": identity["UserId"],
    }


def with_iam_authorizer(event: dict, iam: dict) -> dict:
    """Adds the authorizer to a function URL event, with the caller's account as ``accountId``."""
    request_context = event.setdefault("requestContext", {})
    request_context["accountId"] = iam["accountId"]
    request_context["authorizer"] = {"iam": iam}
    return event


def forbidden_response() -> Response:
    from localstack.aws.protocol.serializer import gen_amzn_requestid

    response = Response(FORBIDDEN_BODY, status=403, mimetype="application/json")
    response.headers["x-amzn-ErrorType"] = "AccessDeniedException"
    response.headers["x-amzn-RequestId"] = gen_amzn_requestid()
    return response


# LocalStack state: the URL config, STS sessions, GetCallerIdentity


def find_url_config(api_id: str, region: str):
    """The URL config with this id in ``region``, looked up as LocalStack's URL router does."""
    from localstack.services.lambda_.invocation.models import lambda_stores

    found = None
    for account_id in list(lambda_stores.keys()):
        for fn in list(lambda_stores[account_id][region].functions.values()):
            for url_config in list(fn.function_url_configs.values()):
                if url_config.url_id.lower() == api_id.lower():
                    found = url_config
    return found


def temporary_credentials(access_key_id: str, account_id: str, region: str):
    """What STS holds for a session key (its store is shared across accounts and regions)."""
    from localstack.services.sts.models import sts_stores

    return sts_stores[account_id][region].credentials.get(access_key_id)


_sts_provider = None


def caller_identity(request: Request, account_id: str, region: str):
    """``GetCallerIdentity`` for the key in the request's Authorization header, answered by
    LocalStack's STS provider with the context its handler chain would give that request."""
    global _sts_provider
    from localstack.services.sts.provider import StsProvider
    from localstack.utils.aws.arns import get_partition

    if _sts_provider is None:
        _sts_provider = StsProvider()  # state lives in module-level stores, not the instance
    context = RequestContext(request)
    context.account_id = account_id
    context.region = region
    context.partition = get_partition(region)
    return _sts_provider.get_caller_identity(context)


def authorize(request: Request, region: str) -> dict:
    """The ``authorizer.iam`` block for a call of an IAM-auth URL (FunctionUrlForbidden if not)."""
    from localstack.aws.accounts import get_account_id_from_access_key_id

    session_token = request.headers.get("X-Amz-Security-Token")
    auth = parse_authorization(request.headers.get("Authorization"))
    if auth is None:
        _refuse(request, refusal(None, region, None, session_token))
    account_id = get_account_id_from_access_key_id(auth.access_key_id)
    creds = temporary_credentials(auth.access_key_id, account_id, region)
    reason = refusal(auth, region, creds, session_token)
    if reason:
        _refuse(request, reason)
    return iam_authorizer(auth.access_key_id, caller_identity(request, account_id, region))


def _refuse(request: Request, reason: str | None) -> NoReturn:
    LOG.info("function URL %s: 403 Forbidden (%s)", request.host, reason)
    raise FunctionUrlForbidden("Forbidden")


def _event_for_lambda_url(original, api_id: str, request: Request) -> dict:
    region = url_region(request.host)
    config = find_url_config(api_id, region) if region else None
    if region is None or config is None or config.auth_type != "AWS_IAM":
        return original(api_id, request)
    iam = authorize(request, region)
    return with_iam_authorizer(original(api_id, request), iam)


def _answer_forbidden(
    chain: HandlerChain[RequestContext],
    exception: Exception,
    context: RequestContext,
    response: ChainResponse,
) -> None:
    if isinstance(exception, FunctionUrlForbidden):
        response.update_from(forbidden_response())


# URL-only functions (lambda:InvokedViaFunctionUrl)

VIA_URL_KEY = "lambda:InvokedViaFunctionUrl"
_DIRECT_INVOKES = ("Invoke", "InvokeAsync", "InvokeWithResponseStream")


class DirectInvokeDenied(ServiceException):
    """A direct Invoke of a function its resource policy lets be invoked only through its URL."""

    code = "AccessDeniedException"
    status_code = 403
    sender_fault = True


def url_conditions(properties: dict) -> dict:
    """The conditions AWS writes into a permission's statement for these
    ``AWS::Lambda::Permission`` properties (what LocalStack leaves out)."""
    condition: dict = {}
    if properties.get("FunctionUrlAuthType"):
        condition["StringEquals"] = {
            "lambda:FunctionUrlAuthType": properties["FunctionUrlAuthType"]
        }
    if str(properties.get("InvokedViaFunctionUrl", "")).lower() == "true":
        condition["Bool"] = {VIA_URL_KEY: "true"}
    return condition


def is_url_only(statements: list[dict]) -> bool:
    """Whether a function with these resource policy statements may be invoked only through its
    URL: some statement grants InvokeFunction on ``lambda:InvokedViaFunctionUrl`` true."""
    return any(
        str(s.get("Condition", {}).get("Bool", {}).get(VIA_URL_KEY, "")).lower() == "true"
        for s in statements
    )


def denial(caller_arn: str, function_arn: str) -> str:
    """AWS's message for an Invoke no policy allows."""
    return (
        f"User: {caller_arn} is not authorized to perform: lambda:InvokeFunction on resource: "
        f"{function_arn} because no resource-based policy allows the lambda:InvokeFunction action"
    )


def _function(account_id: str, region: str, name: str):
    from localstack.services.lambda_.invocation.models import lambda_stores

    return lambda_stores[account_id][region].functions.get(name)


def _statements(fn) -> list[dict]:
    return [s for policy in fn.permissions.values() for s in policy.policy.Statement]


def _create_permission(original, self, request):
    """LocalStack's ``AWS::Lambda::Permission`` create, then the URL conditions it dropped added
    to the stored statement (the statement id is the resource's ``Id``)."""
    event = original(self, request)
    model = request.desired_state
    condition = url_conditions(model)
    if condition and model.get("Id"):
        fn = _function(
            request.account_id, request.region_name, function_name(model["FunctionName"])
        )
        for statement in _statements(fn) if fn else []:
            if statement.get("Sid") == model["Id"]:
                statement.setdefault("Condition", {}).update(condition)
    return event


def function_name(name_or_arn: str) -> str:
    """The function name in a name or (qualified) function ARN."""
    if name_or_arn.startswith("arn:"):
        return name_or_arn.split(":")[6]
    return name_or_arn


def _refuse_direct_invoke_of_url_only(
    chain: HandlerChain[RequestContext], context: RequestContext, response: ChainResponse
) -> None:
    if context.service is None or context.service.service_name != "lambda":
        return
    if context.operation is None or context.operation.name not in _DIRECT_INVOKES:
        return
    from localstack.services.lambda_ import api_utils

    request = context.service_request or {}
    try:
        qualifier = request.get("Qualifier")
        name, _ = api_utils.get_name_and_qualifier(
            str(request.get("FunctionName", "")),
            str(qualifier) if qualifier else None,
            context,
        )
    except Exception:  # let the provider answer what it answers
        return
    fn = _function(context.account_id, context.region, name)
    if fn is None or not is_url_only(_statements(fn)):
        return
    caller = f"arn:{context.partition}:iam::{context.account_id}:root"
    function_arn = (
        f"arn:{context.partition}:lambda:{context.region}:{context.account_id}:function:{name}"
    )
    LOG.info("direct %s of URL-only function %s refused", context.operation.name, name)
    raise DirectInvokeDenied(denial(caller, function_arn))


_installed = False


def install() -> None:
    """Patches LocalStack's function URL router (called once, at LocalStack start)."""
    global _installed
    if _installed:
        return
    from localstack.aws.handlers import (
        serve_custom_exception_handlers,
        serve_custom_service_request_handlers,
    )
    from localstack.services.lambda_ import urlrouter
    from localstack.services.lambda_.resource_providers.aws_lambda_permission import (
        LambdaPermissionProvider,
    )
    from localstack.utils.patch import Patch

    Patch.function(urlrouter.event_for_lambda_url, _event_for_lambda_url).apply()
    Patch.function(LambdaPermissionProvider.create, _create_permission).apply()
    serve_custom_service_request_handlers.append(_refuse_direct_invoke_of_url_only)
    serve_custom_exception_handlers.append(_answer_forbidden)
    _installed = True
    LOG.info("docket: function URLs with AuthType AWS_IAM require SigV4 (signature not verified)")
