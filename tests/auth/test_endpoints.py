"""The fake authorization server's endpoints over a real socket: authorize (consent without a browser, `iss`),
token (code with PKCE S256, refresh with rotation, client credentials; the three client auth methods), RFC 7591
registration, client ID metadata documents, revocation, and the auth log kept redacted."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.auth import AuthServer, RegisteredClient

from ._support import INITIALIZE, LIMIT_S, REDIRECT_URI, mcp_post

pytestmark = pytest.mark.anyio


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


class Fake:
    """A started protected server and an HTTP client for its authorization server."""

    def __init__(self, server: TestMcpServer, http: httpx2.AsyncClient) -> None:
        self.server, self.http = server, http
        self.auth: AuthServer = server.auth  # type: ignore[assignment]
        self.base, self.url = server.base_url, server.url

    async def authorize(self, client: RegisteredClient, challenge: str, **params: str) -> httpx2.Response:
        query = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s-1",
            "resource": self.url,
            "scope": "tickets:read",
            **params,
        }
        return await self.http.get(self.base + "/oauth/authorize", params=query)

    async def code(self, client: RegisteredClient) -> tuple[str, str]:
        verifier, challenge = _pkce()
        response = await self.authorize(client, challenge)
        return parse_qs(urlsplit(response.headers["location"]).query)["code"][0], verifier

    async def token(self, client: RegisteredClient | None, how: str = "basic", **form: str) -> httpx2.Response:
        auth: Any = None
        if client is not None and how == "basic":
            auth = httpx2.BasicAuth(client.client_id, client.client_secret or "")
        elif client is not None:
            form = {"client_id": client.client_id, **form}
            if how == "post":
                form["client_secret"] = client.client_secret or ""
        return await self.http.post(self.base + "/oauth/token", data=form, auth=auth)


@pytest.fixture
async def fake() -> AsyncIterator[Fake]:
    server = TestMcpServer(auth=AuthServer(scopes=["tickets:read", "tickets:write"]), scopes=["tickets:read"])
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient() as http:
            yield Fake(server, http)


def _query(response: httpx2.Response) -> dict[str, str]:
    location = response.headers["location"]
    assert location.startswith(REDIRECT_URI + "?")
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


async def test_authorize_consents_with_a_302_carrying_code_state_and_iss(fake: Fake) -> None:
    """RFC 9207: the redirect's iss is the metadata's issuer; the state comes back as sent."""
    client = fake.auth.register_client(redirect_uris=[REDIRECT_URI])
    response = await fake.authorize(client, _pkce()[1])
    metadata = (await fake.http.get(fake.base + "/.well-known/oauth-authorization-server/oauth")).json()
    assert response.status_code == 302
    query = _query(response)
    assert (query["state"], query["iss"]) == ("s-1", metadata["issuer"])
    assert len(query["code"]) > 20


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"code_challenge": ""}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"scope": "tickets:delete"}, "invalid_scope"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ],
)
async def test_authorize_refuses_by_redirect_with_the_error_state_and_iss(
    fake: Fake, params: dict[str, str], error: str
) -> None:
    """Without PKCE S256, with an unknown scope or another response type: an error redirect, never a code."""
    client = fake.auth.register_client(redirect_uris=[REDIRECT_URI])
    query = _query(await fake.authorize(client, _pkce()[1], **params))
    assert (query["error"], query["state"], "code" in query) == (error, "s-1", False)
    assert query["iss"] == fake.base + "/oauth"


async def test_authorize_without_consent_redirects_access_denied(fake: Fake) -> None:
    """consent=False plays a user who says no."""
    client = fake.auth.register_client(redirect_uris=[REDIRECT_URI])
    fake.auth.consent = False
    assert _query(await fake.authorize(client, _pkce()[1]))["error"] == "access_denied"


async def test_authorize_answers_an_unknown_client_or_redirect_uri_with_400_not_a_redirect(fake: Fake) -> None:
    """A redirect URI that cannot be trusted is never redirected to."""
    client = fake.auth.register_client(redirect_uris=[REDIRECT_URI])
    stranger = RegisteredClient("nobody")
    unknown = await fake.authorize(stranger, _pkce()[1])
    elsewhere = await fake.authorize(client, _pkce()[1], redirect_uri="http://127.0.0.1:2/evil")
    assert (unknown.status_code, unknown.json()["error"]) == (400, "invalid_client")
    assert (elsewhere.status_code, "location" in elsewhere.headers) == (400, False)


@pytest.mark.parametrize("how", ["basic", "post", "none"])
async def test_the_code_exchange_takes_each_client_auth_method_and_the_token_opens_the_endpoint(
    fake: Fake, how: str
) -> None:
    """client_secret_basic, client_secret_post and none (a public client): a token that the MCP endpoint takes."""
    method = {"basic": "client_secret_basic", "post": "client_secret_post", "none": "none"}[how]
    client = fake.auth.register_client(auth_method=method, redirect_uris=[REDIRECT_URI])
    code, verifier = await fake.code(client)
    response = await fake.token(
        client,
        how,
        grant_type="authorization_code",
        code=code,
        code_verifier=verifier,
        redirect_uri=REDIRECT_URI,
        resource=fake.url,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["token_type"], body["scope"], body["expires_in"]) == ("Bearer", "tickets:read", 3600)
    assert (await mcp_post(fake.http, fake.url, INITIALIZE, body["access_token"])).status_code == 200
    exchange = fake.server.journal.auth.at_endpoint("token")[0]
    assert (exchange.client_auth, exchange.issued) == (method, ("token 1", "refresh 1"))


async def test_the_code_exchange_checks_pkce_and_takes_a_code_once(fake: Fake) -> None:
    """A wrong verifier is invalid_grant; so is a code sent a second time."""
    client = fake.auth.register_client(redirect_uris=[REDIRECT_URI])
    code, verifier = await fake.code(client)
    form = {"grant_type": "authorization_code", "redirect_uri": REDIRECT_URI}
    wrong = await fake.token(client, code=code, code_verifier=_pkce()[0], **form)
    code, verifier = await fake.code(client)
    first = await fake.token(client, code=code, code_verifier=verifier, **form)
    again = await fake.token(client, code=code, code_verifier=verifier, **form)
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert "PKCE S256" in wrong.json()["error_description"]
    assert first.status_code == 200
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


async def test_a_client_that_authenticates_otherwise_than_registered_or_with_a_wrong_secret_gets_401(
    fake: Fake,
) -> None:
    """invalid_client, naming the client and the method; the secret sent is never echoed."""
    client = fake.auth.register_client(auth_method="client_secret_basic")
    posted = await fake.token(client, "post", grant_type="client_credentials")
    guessed = await fake.http.post(
        fake.base + "/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=httpx2.BasicAuth(client.client_id, "guessed-secret"),
    )
    assert (posted.status_code, posted.json()["error"]) == (401, "invalid_client")
    assert "registered for client_secret_basic, but authenticated with client_secret_post" in posted.text
    assert (guessed.status_code, guessed.headers["www-authenticate"]) == (401, 'Basic realm="mcp-testkit"')
    assert "guessed-secret" not in guessed.text
    assert "guessed-secret" not in fake.server.journal.auth.format()


async def test_refresh_rotates_and_a_spent_refresh_token_is_refused(fake: Fake) -> None:
    """Each refresh gives a new access and refresh token; the old refresh token is spent."""
    client = fake.auth.register_client(redirect_uris=[REDIRECT_URI])
    code, verifier = await fake.code(client)
    first = (
        await fake.token(
            client,
            grant_type="authorization_code",
            code=code,
            code_verifier=verifier,
            redirect_uri=REDIRECT_URI,
            resource=fake.url,
        )
    ).json()
    renewed = await fake.token(client, grant_type="refresh_token", refresh_token=first["refresh_token"])
    reused = await fake.token(client, grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert renewed.status_code == 200
    assert renewed.json()["refresh_token"] != first["refresh_token"]
    assert (reused.status_code, reused.json()["error_description"]) == (
        400,
        "refresh 1 was already used: refresh tokens rotate",
    )
    assert fake.auth.grant("token 2").resource == fake.url
    assert (await mcp_post(fake.http, fake.url, INITIALIZE, renewed.json()["access_token"])).status_code == 200


async def test_client_credentials_for_a_confidential_client_only(fake: Fake) -> None:
    """A confidential client gets a token for the resource it names; a public client is unauthorized_client."""
    confidential = fake.auth.register_client(auth_method="client_secret_post")
    public = fake.auth.register_client(auth_method="none")
    granted = await fake.token(
        confidential, "post", grant_type="client_credentials", scope="tickets:read", resource=fake.url
    )
    refused = await fake.token(public, "none", grant_type="client_credentials")
    assert "refresh_token" not in granted.json()
    assert (await mcp_post(fake.http, fake.url, INITIALIZE, granted.json()["access_token"])).status_code == 200
    assert (refused.status_code, refused.json()["error"]) == (400, "unauthorized_client")


async def test_dynamic_registration_issues_a_client_with_a_secret_unless_public(fake: Fake) -> None:
    """RFC 7591: 201 with client_id, a secret for a confidential client, none for a public one."""
    url = fake.base + "/oauth/register"
    confidential = await fake.http.post(url, json={"redirect_uris": [REDIRECT_URI], "client_name": "a"})
    public = await fake.http.post(url, json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"})
    nowhere = await fake.http.post(url, json={"client_name": "no redirect"})
    assert confidential.status_code == public.status_code == 201
    assert confidential.json()["token_endpoint_auth_method"] == "client_secret_basic"
    assert confidential.json()["client_name"] == "a"
    assert "client_secret" in confidential.json()
    assert "client_secret" not in public.json()
    assert (nowhere.status_code, nowhere.json()["error"]) == (400, "invalid_redirect_uri")
    assert fake.auth.clients[public.json()["client_id"]].registered_by == "registration"
    assert confidential.json()["client_secret"] not in repr(fake.auth.clients)


async def test_a_client_id_metadata_document_makes_its_url_a_public_client(fake: Fake) -> None:
    """A scripted document: the metadata says so, and its URL authorizes and exchanges as client_id."""
    url = "https://app.example/oauth/client.json"
    fake.auth.client_metadata_document(url, {"client_name": "app", "redirect_uris": [REDIRECT_URI]})
    metadata = (await fake.http.get(fake.base + "/.well-known/oauth-authorization-server/oauth")).json()
    client = RegisteredClient(url, auth_method="none")
    code, verifier = await fake.code(client)
    token = await fake.token(
        client, "none", grant_type="authorization_code", code=code, code_verifier=verifier, redirect_uri=REDIRECT_URI
    )
    assert metadata["client_id_metadata_document_supported"] is True
    assert token.status_code == 200
    assert fake.auth.clients[url].registered_by == "metadata document"


async def test_revocation_ends_a_token_at_the_mcp_endpoint(fake: Fake) -> None:
    """RFC 7009: 200, and the revoked token is 401 from then on."""
    client = fake.auth.register_client(auth_method="client_secret_post")
    token = (await fake.token(client, "post", grant_type="client_credentials", resource=fake.url)).json()
    response = await fake.http.post(
        fake.base + "/oauth/revoke",
        data={"token": token["access_token"], "client_id": client.client_id, "client_secret": client.client_secret},
    )
    assert response.status_code == 200
    refused = await mcp_post(fake.http, fake.url, INITIALIZE, token["access_token"])
    assert refused.status_code == 401
    assert "token 1 was revoked" in refused.headers["www-authenticate"]


async def test_the_auth_log_never_holds_a_code_verifier_secret_or_token(fake: Fake) -> None:
    """Every secret parameter reads '***' in the log, and no issued value appears in any of its renderings."""
    client = fake.auth.register_client(auth_method="client_secret_post", redirect_uris=[REDIRECT_URI])
    code, verifier = await fake.code(client)
    body: dict[str, Any] = (
        await fake.token(
            client,
            "post",
            grant_type="authorization_code",
            code=code,
            code_verifier=verifier,
            redirect_uri=REDIRECT_URI,
        )
    ).json()
    await fake.token(client, "post", grant_type="refresh_token", refresh_token=body["refresh_token"])
    log = fake.server.journal.auth
    token_params = [e.parameters for e in log.at_endpoint("token")]
    assert token_params[0]["code"] == token_params[0]["code_verifier"] == token_params[0]["client_secret"] == "***"
    assert token_params[1]["refresh_token"] == "***"
    rendered = log.format() + repr(list(log))
    for secret in (code, verifier, client.client_secret, body["access_token"], body["refresh_token"]):
        assert secret is not None
        assert secret not in rendered


async def test_an_unknown_grant_or_one_the_client_did_not_register_is_refused(fake: Fake) -> None:
    """unsupported_grant_type for a grant the server has none of; unauthorized_client for one not registered."""
    client = fake.auth.register_client(auth_method="client_secret_post", grant_types=["client_credentials"])
    password = await fake.token(client, "post", grant_type="password")
    refresh = await fake.token(client, "post", grant_type="refresh_token", refresh_token="x")
    assert (password.status_code, password.json()["error"]) == (400, "unsupported_grant_type")
    assert (refresh.status_code, refresh.json()["error"]) == (400, "unauthorized_client")
