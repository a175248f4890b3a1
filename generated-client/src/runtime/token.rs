//! Access tokens: obtained lazily, refreshed before they expire (one refresh however many
//! calls are waiting), renewed after a 401, revoked on request.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use tracing::Instrument;

use super::client::{ClientInner, Failure};
use super::error::Error;
use super::route::Route;
use super::secret::Secret;
use super::timestamp::parse_rfc3339;
use super::writer::RequestWriter;

/// The documented token lifetime, assumed when an answer's `expiresAt` cannot be read.
const DOCUMENTED_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// The token the client holds, behind one lock so that renewing is single-flight.
#[derive(Default)]
pub(crate) struct TokenState {
    current: Option<Token>,
    /// Counts renewals, so a 401 renews only the token it was answered for.
    generation: u64,
}

struct Token {
    access: Secret,
    refresh: Option<Secret>,
    /// When to renew: `expires_at` less the refresh margin.
    renew_at: SystemTime,
    expires_at: SystemTime,
    /// Refused by the service (401): renew before the next use.
    refused: bool,
}

/// The answer data of token issue and refresh.
#[derive(Deserialize)]
struct TokenGrant {
    access_token: Secret,
    #[serde(default)]
    refresh_token: Option<Secret>,
    #[serde(default, rename = "expiresAt")]
    expires_at: Option<String>,
}

impl ClientInner {
    /// The current access token and its generation, renewing it first when it is due.
    /// Callers queue on the lock, so concurrent callers cause one renewal, not many.
    pub(crate) async fn bearer(&self) -> Result<(Secret, u64), Error> {
        let mut state = self.tokens.lock().await;
        let now = SystemTime::now();
        if let Some(token) = &state.current
            && !token.refused
            && now < token.renew_at
        {
            return Ok((token.access.clone(), state.generation));
        }
        let refresh = state.current.as_ref().and_then(|t| t.refresh.clone());
        let renewed = match refresh {
            Some(refresh_token) => match self.refresh_token(&refresh_token).await {
                Ok(token) => Ok(token),
                Err(_) => {
                    tracing::debug!("token refresh failed; issuing a new token");
                    self.issue_token().await
                }
            },
            None => self.issue_token().await,
        };
        match renewed {
            Ok(token) => {
                let access = token.access.clone();
                state.current = Some(token);
                state.generation += 1;
                Ok((access, state.generation))
            }
            Err(error) => {
                // Renewing early failed, but the old token is still good for a while.
                if let Some(token) = &state.current
                    && !token.refused
                    && now < token.expires_at
                {
                    tracing::warn!("token renewal failed; using the current token until it expires");
                    return Ok((token.access.clone(), state.generation));
                }
                Err(Error::Auth { cause: Box::new(error) })
            }
        }
    }

    /// Marks the token of `generation` as refused, unless it was renewed meanwhile.
    pub(crate) async fn invalidate_token(&self, generation: u64) {
        let mut state = self.tokens.lock().await;
        if state.generation == generation
            && let Some(token) = &mut state.current
        {
            token.refused = true;
        }
    }

    async fn issue_token(&self) -> Result<Token, Error> {
        let route = self.auth_routes.issue;
        let mut w = RequestWriter::new(route);
        w.body("grant_type", "client_credentials")?;
        w.body("client_id", &self.credentials.client_id)?;
        w.body("client_secret", self.credentials.client_secret.expose())?;
        self.token_request(route, w).await
    }

    async fn refresh_token(&self, refresh_token: &Secret) -> Result<Token, Error> {
        let route = self.auth_routes.refresh;
        let mut w = RequestWriter::new(route);
        w.body("grant_type", "refresh_token")?;
        w.body("refresh_token", refresh_token.expose())?;
        self.token_request(route, w).await
    }

    async fn token_request(&self, route: &'static Route, w: RequestWriter) -> Result<Token, Error> {
        let span = tracing::info_span!(
            "payspec.token",
            operation = route.operation,
            method = route.method.as_str(),
            route = route.path,
        );
        async {
            let request = w.finish()?;
            let answer = self.attempt(&request, None, self.timeout).await.map_err(|f: Failure| f.error)?;
            let raw = answer.data.ok_or_else(|| Error::Decode {
                status: answer.status,
                reason: "the token answer has no data".to_owned(),
                excerpt: String::new(),
            })?;
            let grant: TokenGrant = self.decode_data(answer.status, &raw)?;
            let expires_at = match grant.expires_at.as_deref().and_then(parse_rfc3339) {
                Some(at) => at,
                None => {
                    tracing::warn!("the token answer's expiresAt could not be read; assuming 30 minutes");
                    SystemTime::now() + DOCUMENTED_LIFETIME
                }
            };
            Ok(Token {
                access: grant.access_token,
                refresh: grant.refresh_token,
                renew_at: expires_at.checked_sub(self.refresh_margin).unwrap_or(UNIX_EPOCH),
                expires_at,
                refused: false,
            })
        }
        .instrument(span)
        .await
    }

    /// Revokes the current token, if any, and forgets it.
    pub(crate) async fn revoke(&self) -> Result<(), Error> {
        let mut state = self.tokens.lock().await;
        let Some(token) = &state.current else {
            return Ok(());
        };
        let route = self.auth_routes.revoke;
        let mut w = RequestWriter::new(route);
        w.body("clientId", &self.credentials.client_id)?;
        w.body("access_token", token.access.expose())?;
        let request = w.finish()?;
        self.attempt(&request, Some(&token.access), self.timeout).await.map_err(|f| f.error)?;
        state.current = None;
        state.generation += 1;
        Ok(())
    }
}
