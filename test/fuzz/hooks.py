# Loaded by Schemathesis before it runs (`hooks` in test/fuzz/schemathesis.toml).
#
# CPython 3.11 releases before 3.11.8 (this machine's Python among them) can fail to parse
# a large module with "SystemError: AST constructor recursion depth mismatch", depending
# on how deep the stack is when ast.parse runs. Hypothesis parses a lambda's module only to
# describe the lambda in a strategy's repr, which Schemathesis builds as it generates
# cases; the error then aborts that operation's tests. The description is for display
# only, so where the parse fails the lambda is described as "lambda" and the run goes on.
from hypothesis.internal import lambda_sources

_describe = lambda_sources.lambda_description


def _lambda_description(f):
    try:
        return _describe(f)
    except SystemError:
        return "lambda"


lambda_sources.lambda_description = _lambda_description


# The providers' webhooks (/v1/webhooks/*) take only a post its provider signed, with a key
# the fuzzer does not hold: whatever it sends, in any run, must be refused with a 4xx
# (mostly 401 invalid-signature), never taken and never a 5xx. OPTIONS takes nothing: it
# answers which methods the path has (204 with Allow), as on every route.
import schemathesis


@schemathesis.check
def webhooks_refuse_unsigned_posts(ctx, response, case):
    if not case.path.startswith("/v1/webhooks/"):
        return
    if case.method.upper() == "OPTIONS":
        if response.status_code != 204:
            raise AssertionError(f"OPTIONS {case.path} answered {response.status_code}; expected 204 with Allow")
        return
    if not 400 <= response.status_code < 500:
        raise AssertionError(
            f"{case.method} {case.path} answered {response.status_code} to a post no provider signed; expected a 4xx"
        )
