"""A relying party written the way vendors write one in Python, against Almoner.

Run by test/interop/python-clients.test.ts with Debian's python3:

    /usr/bin/python3 test/interop/python_client.py '<json config>'

config: {"library": "authlib" | "requests-oauthlib", "issuer", "client_id", "client_secret",
"redirect_uri", "scope"}. The browser step is the test's: this script prints one JSON line
{"authorization_url": ...}, reads the callback URL (the redirect the browser was sent to) on
stdin, then runs the steps and prints one JSON line {"steps": {...}} (or {"error": ...} and exits 1).
No token is printed, only what the test asserts on.
"""

import json
import os
import secrets
import sys

import requests


def emit(obj):
    print(json.dumps(obj), flush=True)


def discover(issuer):
    response = requests.get(issuer + '/.well-known/openid-configuration', timeout=10)
    response.raise_for_status()
    return response.json()


def token_summary(token):
    scope = token.get('scope')
    # oauthlib hands the scope back as a list.
    if isinstance(scope, list):
        scope = ' '.join(scope)
    return {
        'token_type': token.get('token_type'),
        'expires_in': token.get('expires_in'),
        'scope': scope,
        'has_refresh_token': bool(token.get('refresh_token')),
        'has_id_token': bool(token.get('id_token')),
    }


def run_authlib(config, meta):
    from authlib.integrations.requests_client import OAuth2Session
    from authlib.jose import JsonWebKey, jwt
    from authlib.oidc.core import CodeIDToken

    session = OAuth2Session(
        config['client_id'],
        config['client_secret'],
        scope=config['scope'],
        redirect_uri=config['redirect_uri'],
        # Almoner accepts client_secret_basic only (Authlib's default with a secret; named here).
        token_endpoint_auth_method='client_secret_basic',
        code_challenge_method='S256',
    )
    verifier = secrets.token_urlsafe(48)
    # Almoner requires nonce on every authorization request: Authlib passes extra keywords on.
    nonce = secrets.token_urlsafe(24)
    url, state = session.create_authorization_url(meta['authorization_endpoint'], code_verifier=verifier, nonce=nonce)
    emit({'authorization_url': url})
    callback = sys.stdin.readline().strip()

    steps = {}
    token = session.fetch_token(meta['token_endpoint'], authorization_response=callback, code_verifier=verifier)
    steps['code_exchange'] = token_summary(token)

    if token.get('id_token'):
        jwks = JsonWebKey.import_key_set(requests.get(meta['jwks_uri'], timeout=10).json())
        claims = jwt.decode(
            token['id_token'],
            jwks,
            claims_cls=CodeIDToken,
            claims_options={'iss': {'essential': True, 'value': meta['issuer']}},
            claims_params={'nonce': nonce, 'client_id': config['client_id'], 'access_token': token['access_token']},
        )
        claims.validate()
        steps['id_token'] = {'valid': True, 'sub': claims['sub'], 'aud': claims['aud'], 'nonce_matches': claims['nonce'] == nonce, 'alg': claims.header['alg']}

    if 'openid' in config['scope'].split():
        userinfo = session.get(meta['userinfo_endpoint'], timeout=10)
        steps['userinfo'] = {'status': userinfo.status_code, 'body': userinfo.json()}

    # Authlib sends the session's scope again on refresh (scope=... in the body).
    old_refresh = token['refresh_token']
    refreshed = session.refresh_token(meta['token_endpoint'], refresh_token=old_refresh)
    steps['refresh'] = {**token_summary(refreshed), 'rotated': refreshed['refresh_token'] != old_refresh}

    active = session.introspect_token(meta['introspection_endpoint'], token=refreshed['access_token'])
    steps['introspection'] = {'status': active.status_code, 'body': {k: v for k, v in active.json().items() if k in ('active', 'scope', 'client_id', 'sub', 'token_type')}}

    revoked = session.revoke_token(meta['revocation_endpoint'], token=refreshed['refresh_token'], token_type_hint='refresh_token')
    after = session.introspect_token(meta['introspection_endpoint'], token=refreshed['refresh_token'], token_type_hint='refresh_token')
    steps['revocation'] = {'status': revoked.status_code, 'introspection_after': {'active': after.json().get('active')}}
    return steps


def run_requests_oauthlib(config, meta):
    import base64
    import hashlib

    from oauthlib.oauth2.rfc6749.errors import OAuth2Error
    from requests.auth import HTTPBasicAuth
    from requests_oauthlib import OAuth2Session

    session = OAuth2Session(config['client_id'], redirect_uri=config['redirect_uri'], scope=config['scope'].split())
    # requests-oauthlib 1.3 has no PKCE of its own: the challenge goes in as extra parameters,
    # and so does the nonce Almoner requires.
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip('=')
    nonce = secrets.token_urlsafe(24)
    url, state = session.authorization_url(meta['authorization_endpoint'], nonce=nonce, code_challenge=challenge, code_challenge_method='S256')
    emit({'authorization_url': url})
    callback = sys.stdin.readline().strip()

    steps = {}
    # With client_secret and no include_client_id, requests-oauthlib sends HTTP Basic.
    token = session.fetch_token(meta['token_endpoint'], authorization_response=callback, client_secret=config['client_secret'], code_verifier=verifier)
    steps['code_exchange'] = token_summary(token)

    # requests-oauthlib's documented auto-refresh pattern passes client_id and client_secret as
    # keywords, which puts the secret in the body: refused, Almoner accepts HTTP Basic only.
    try:
        session.refresh_token(meta['token_endpoint'], refresh_token=token['refresh_token'], client_id=config['client_id'], client_secret=config['client_secret'])
        steps['secret_in_body'] = {'refused': False}
    except OAuth2Error as error:
        steps['secret_in_body'] = {'refused': True, 'error': error.error, 'status': error.status_code}

    old_refresh = token['refresh_token']
    refreshed = session.refresh_token(meta['token_endpoint'], refresh_token=old_refresh, auth=HTTPBasicAuth(config['client_id'], config['client_secret']))
    steps['refresh'] = {**token_summary(refreshed), 'rotated': refreshed['refresh_token'] != old_refresh}

    if 'openid' in config['scope'].split():
        userinfo = session.get(meta['userinfo_endpoint'], timeout=10)
        steps['userinfo'] = {'status': userinfo.status_code, 'body': userinfo.json()}
    return steps


def main():
    config = json.loads(sys.argv[1])
    # oauthlib and Authlib refuse plain http unless told: the tests run on loopback.
    os.environ['OAUTHLIB_INSECURE_TRANSPORT'] = '1'
    os.environ['AUTHLIB_INSECURE_TRANSPORT'] = '1'
    meta = discover(config['issuer'])
    run = run_authlib if config['library'] == 'authlib' else run_requests_oauthlib
    try:
        steps = run(config, meta)
    except Exception as error:  # reported to the test, which shows it
        emit({'error': '%s: %s' % (type(error).__name__, error)})
        sys.exit(1)
    emit({'steps': steps})


if __name__ == '__main__':
    main()
