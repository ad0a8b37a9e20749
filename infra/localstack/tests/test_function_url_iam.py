"""Unit tests of IAM auth for function URLs (the HTTP flow is tried on a running LocalStack)."""

import types
import unittest
from datetime import UTC, datetime, timedelta

from localstack.http import Request
from localstack.services.sts.models import TemporaryCredentials, sts_stores

from docket_localstack import function_url_iam
from docket_localstack.function_url_iam import (
    FORBIDDEN_BODY,
    FunctionUrlForbidden,
    SigV4Authorization,
    authorize,
    denial,
    forbidden_response,
    function_name,
    iam_authorizer,
    is_url_only,
    parse_authorization,
    refusal,
    url_conditions,
    url_region,
    with_iam_authorizer,
)

SIGNATURE = "0123456789abcdef" * 4
BOTOCORE = (
    f"AWS4-HMAC-SHA256 Credential=LSIAQAAAAAAAAEXAMPLE/20261130/us-east-1/lambda/aws4_request, "
    f"SignedHeaders=host;x-amz-date;x-amz-security-token, Signature={SIGNATURE}"
)
HOST = "abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.localhost.localstack.cloud:4620"


def credential(access_key_id="test", region="us-east-1", signed="host;x-amz-date"):
    return SigV4Authorization(
        access_key_id, "20261130", region, tuple(signed.split(";")), SIGNATURE
    )


def session(token="the-token", expires_in=3600, key="LSIAQAAAAAAAAEXAMPLE"):
    return TemporaryCredentials(
        access_key_id=key,
        secret_access_key="s",
        session_token=token,
        expiration=datetime.now(UTC) + timedelta(seconds=expires_in),
        account_id="000000000000",
        arn="arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice",
        user_id="AROAQAAAAAAAAEXAMPLE:alice",
    )


class AuthorizationHeader(unittest.TestCase):
    def test_botocore_header_is_parsed(self):
        auth = parse_authorization(BOTOCORE)
        self.assertEqual(
            auth,
            SigV4Authorization(
                "LSIAQAAAAAAAAEXAMPLE",
                "20261130",
                "us-east-1",
                ("host", "x-amz-date", "x-amz-security-token"),
                SIGNATURE,
            ),
        )

    def test_aws_sigv4_crate_header_without_spaces_is_parsed(self):
        header = (
            f"AWS4-HMAC-SHA256 Credential=test/20261130/eu-west-3/lambda/aws4_request,"
            f"SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature={SIGNATURE}"
        )
        auth = parse_authorization(header)
        assert auth is not None
        self.assertEqual((auth.access_key_id, auth.region), ("test", "eu-west-3"))

    def test_missing_or_malformed_headers_are_none(self):
        for header in [
            None,
            "",
            "Bearer abc",
            BOTOCORE.replace("/lambda/", "/execute-api/"),  # another service
            BOTOCORE.replace("AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256"),
            BOTOCORE.replace("/20261130/", "/2026-11-30/"),
            BOTOCORE.replace(SIGNATURE, SIGNATURE[:-1]),  # not 64 hex digits
            BOTOCORE.replace(SIGNATURE, SIGNATURE.upper()),
            BOTOCORE.replace("SignedHeaders=host;x-amz-date;x-amz-security-token, ", ""),
            "AWS test:signature",  # SigV2
            BOTOCORE + ", Extra=1",
        ]:
            with self.subTest(header=header):
                self.assertIsNone(parse_authorization(header))

    def test_region_of_the_url_host(self):
        self.assertEqual(url_region(HOST), "us-east-1")
        self.assertEqual(url_region(HOST.upper()), "us-east-1")
        self.assertIsNone(url_region("localhost.localstack.cloud:4620"))


class Refusal(unittest.TestCase):
    def test_well_formed_long_term_key_passes(self):
        self.assertIsNone(refusal(credential(), "us-east-1", None, None))

    def test_missing_header_is_refused(self):
        self.assertIn("no SigV4", refusal(None, "us-east-1", None, None) or "")

    def test_other_region_is_refused(self):
        self.assertIn(
            "region", refusal(credential(region="eu-west-1"), "us-east-1", None, None) or ""
        )

    def test_unsigned_host_is_refused(self):
        self.assertIn(
            "host", refusal(credential(signed="x-amz-date"), "us-east-1", None, None) or ""
        )

    def test_session_key_needs_its_own_token(self):
        key = credential("LSIAQAAAAAAAAEXAMPLE")
        self.assertIsNone(refusal(key, "us-east-1", session(), "the-token"))
        self.assertIn("X-Amz-Security-Token", refusal(key, "us-east-1", session(), None) or "")
        self.assertIn("X-Amz-Security-Token", refusal(key, "us-east-1", session(), "other") or "")

    def test_expired_or_unknown_session_key_is_refused(self):
        key = credential("LSIAQAAAAAAAAEXAMPLE")
        self.assertIn(
            "expired", refusal(key, "us-east-1", session(expires_in=-1), "the-token") or ""
        )
        self.assertIn("unknown", refusal(key, "us-east-1", None, "the-token") or "")
        self.assertIn(
            "unknown", refusal(credential("ASIAQAAAAAAAAEXAMPLE"), "us-east-1", None, None) or ""
        )


IDENTITY = {
    "UserId": "AROAQAAAAAAAAEXAMPLE:alice",
    "Account": "000000000000",
    "Arn": "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice",
}


class Authorizer(unittest.TestCase):
    def test_iam_block_has_the_aws_shape(self):
        self.assertEqual(
            iam_authorizer("LSIAQAAAAAAAAEXAMPLE", IDENTITY),
            {
                "accessKey": "LSIAQAAAAAAAAEXAMPLE",
                "accountId": "000000000000",
                "callerId": "AROAQAAAAAAAAEXAMPLE:alice",
                "cognitoIdentity": None,
                "principalOrgId": None,
                "userArn": "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice",
                "userId": "AROAQAAAAAAAAEXAMPLE:alice",
            },
        )

    def test_event_gets_the_authorizer_and_the_callers_account(self):
        event = {"version": "2.0", "requestContext": {"accountId": "anonymous", "apiId": "abc"}}
        iam = iam_authorizer(
            "test",
            {
                "UserId": "111122223333",
                "Account": "111122223333",
                "Arn": "arn:aws:iam::111122223333:root",
            },
        )
        with_iam_authorizer(event, iam)
        self.assertEqual(
            event["requestContext"],
            {"accountId": "111122223333", "apiId": "abc", "authorizer": {"iam": iam}},
        )

    def test_forbidden_response(self):
        response = forbidden_response()
        self.assertEqual(
            (response.status_code, response.get_data(as_text=True)), (403, FORBIDDEN_BODY)
        )
        self.assertEqual(response.headers["x-amzn-ErrorType"], "AccessDeniedException")


class ResolvedWithLocalStacksSts(unittest.TestCase):
    """authorize() against LocalStack's in-process STS stores (no server needed)."""

    def request(self, authorization=None, token=None):
        headers = {"Host": HOST}
        if authorization:
            headers["Authorization"] = authorization
        if token:
            headers["X-Amz-Security-Token"] = token
        return Request("GET", "/", headers=headers)

    def test_default_key_is_the_account_root(self):
        iam = authorize(self.request(BOTOCORE.replace("LSIAQAAAAAAAAEXAMPLE", "test")), "us-east-1")
        self.assertEqual(
            (iam["userArn"], iam["accountId"], iam["userId"], iam["accessKey"]),
            ("arn:aws:iam::000000000000:root", "000000000000", "000000000000", "test"),
        )

    def test_assumed_role_session_is_its_role_session(self):
        from localstack.services.iam.utils import generate_temp_access_key_id

        key = generate_temp_access_key_id("000000000000")
        store = sts_stores["000000000000"]["us-east-1"]
        store.credentials[key] = session(key=key)
        self.addCleanup(store.credentials.pop, key, None)
        iam = authorize(
            self.request(BOTOCORE.replace("LSIAQAAAAAAAAEXAMPLE", key), "the-token"), "us-east-1"
        )
        self.assertEqual(
            iam["userArn"], "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice"
        )
        self.assertEqual(iam["callerId"], "AROAQAAAAAAAAEXAMPLE:alice")
        with self.assertRaises(FunctionUrlForbidden):
            authorize(self.request(BOTOCORE.replace("LSIAQAAAAAAAAEXAMPLE", key)), "us-east-1")

    def test_no_header_raises_forbidden(self):
        with self.assertRaises(FunctionUrlForbidden):
            authorize(self.request(), "us-east-1")


class EventHook(unittest.TestCase):
    """The replacement of urlrouter.event_for_lambda_url, with the URL config looked up faked."""

    def call(self, auth_type, headers):
        calls = []

        def original(api_id, request):
            calls.append(api_id)
            return {"requestContext": {"accountId": "anonymous"}}

        config = types.SimpleNamespace(auth_type=auth_type)
        find = function_url_iam.find_url_config
        function_url_iam.find_url_config = lambda api_id, region: config
        self.addCleanup(setattr, function_url_iam, "find_url_config", find)
        request = Request("GET", "/", headers={"Host": HOST, **headers})
        return calls, lambda: function_url_iam._event_for_lambda_url(original, "abc", request)

    def test_none_auth_is_left_alone(self):
        calls, run = self.call("NONE", {})
        self.assertEqual(run(), {"requestContext": {"accountId": "anonymous"}})
        self.assertEqual(calls, ["abc"])

    def test_iam_auth_without_signature_never_builds_the_event(self):
        calls, run = self.call("AWS_IAM", {})
        with self.assertRaises(FunctionUrlForbidden):
            run()
        self.assertEqual(calls, [])

    def test_iam_auth_with_signature_adds_the_authorizer(self):
        header = BOTOCORE.replace("LSIAQAAAAAAAAEXAMPLE", "test")
        _, run = self.call("AWS_IAM", {"Authorization": header})
        event = run()
        self.assertEqual(event["requestContext"]["accountId"], "000000000000")
        self.assertEqual(
            event["requestContext"]["authorizer"]["iam"]["userArn"],
            "arn:aws:iam::000000000000:root",
        )


class UrlOnlyTest(unittest.TestCase):
    """Functions a resource policy lets be invoked only through their URL."""

    def test_the_permission_properties_become_the_conditions_aws_writes(self):
        self.assertEqual(
            url_conditions({"InvokedViaFunctionUrl": True, "Action": "lambda:InvokeFunction"}),
            {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}},
        )
        self.assertEqual(
            url_conditions({"FunctionUrlAuthType": "AWS_IAM", "InvokedViaFunctionUrl": "true"}),
            {
                "StringEquals": {"lambda:FunctionUrlAuthType": "AWS_IAM"},
                "Bool": {"lambda:InvokedViaFunctionUrl": "true"},
            },
        )
        self.assertEqual(url_conditions({"Action": "lambda:InvokeFunction"}), {})
        self.assertEqual(url_conditions({"InvokedViaFunctionUrl": False}), {})

    def test_a_function_is_url_only_when_a_statement_requires_the_url(self):
        via_url = {"Sid": "a", "Condition": {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}}}
        url_auth = {
            "Sid": "b",
            "Condition": {"StringEquals": {"lambda:FunctionUrlAuthType": "AWS_IAM"}},
        }
        plain = {"Sid": "c", "Principal": {"Service": "states.amazonaws.com"}}
        self.assertTrue(is_url_only([url_auth, via_url]))
        self.assertFalse(is_url_only([url_auth, plain]))
        self.assertFalse(is_url_only([]))

    def test_names_and_the_denial_read_as_aws_writes_them(self):
        arn = "arn:aws:lambda:us-east-1:000000000000:function:docket-dev-review-api"
        self.assertEqual(function_name(arn), "docket-dev-review-api")
        self.assertEqual(function_name(arn + ":live"), "docket-dev-review-api")
        self.assertEqual(function_name("docket-dev-review-api"), "docket-dev-review-api")
        self.assertIn("because no resource-based policy allows", denial("arn:aws:iam::1:root", arn))


if __name__ == "__main__":
    unittest.main()
