//! The token's life on the call path: the bearer an attempt sends (the one held when it
//! can be used now, else the renewal in flight's, waited for), a renewal started on a task
//! of its own when the token is due, refreshing the one held when it can and issuing one
//! otherwise, and the token revoked. Each token request goes through the one orchestration
//! every request takes: [`SendsTokenRequests`], which the call path implements, so that a
//! token request is paced, bounded and read as any call is.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use tokio::time::Instant;
use tracing::Instrument;

use super::cell::{Bearer, RenewFrom, RenewalGuard, TokenFailure, Waiting};
use super::grant::Token;
use super::identity::Identity;
use crate::answer::RawAnswer;
use crate::error::Error;
use crate::request::PreparedRequest;

/// What sends a token request: the one path every request takes.
pub(crate) trait SendsTokenRequests: Send + Sync + Sized + 'static {
    /// Who the client is.
    fn identity(&self) -> &Identity;
    /// Where the client sends.
    fn base_url(&self) -> &str;
    /// Sends a token request (with the token it replaces, for a refresh or a revocation)
    /// as every request is sent, with a token request's policy.
    fn send_token_request<'a>(
        self: &'a Arc<Self>,
        request: &'a PreparedRequest,
        bearer: Option<&'a HeaderValue>,
    ) -> impl Future<Output = Result<Box<RawAnswer>, Error>> + Send + 'a;
}

/// The current token's header when it can be used now, without waiting (and a renewal
/// started when it is due): what nearly every call needs.
pub(crate) fn ready_bearer<S: SendsTokenRequests>(sender: &Arc<S>, now: Instant) -> Option<Bearer> {
    let (bearer, renew) = sender.identity().tokens().ready(now)?;
    if let Some(from) = renew {
        start_renewal(sender, from);
    }
    Some(bearer)
}

/// A bearer for the next attempt when none was ready: the renewal in flight's (started if
/// none is), until `deadline`; `budget` is the call's whole allowance, named in the
/// timeout error.
pub(crate) async fn wait_for_bearer<S: SendsTokenRequests>(
    sender: &Arc<S>,
    deadline: Instant,
    budget: Duration,
) -> Result<Bearer, TokenFailure> {
    let (waiting, renew) = match sender.identity().tokens().wait()? {
        Waiting::Ready(bearer, renew) => (Ok(bearer), renew),
        Waiting::Renewal(wait, renew) => (Err(wait), renew),
    };
    if let Some(from) = renew {
        start_renewal(sender, from);
    }
    match waiting {
        Ok(bearer) => Ok(bearer),
        Err(wait) => wait.until(deadline, budget).await,
    }
}

/// Starts one renewal on a task of its own, so that no caller's cancellation can abandon
/// it halfway.
fn start_renewal<S: SendsTokenRequests>(sender: &Arc<S>, from: RenewFrom) {
    let sender = Arc::clone(sender);
    let mut guard = RenewalGuard::new(Arc::clone(sender.identity().tokens()));
    tokio::spawn(
        async move {
            let outcome = renew(&sender, from).await;
            crate::metrics::renewal(outcome.as_ref().map_or_else(|error| error.kind().as_str(), |_| "ok"));
            guard.finish(outcome);
        }
        .instrument(tracing::debug_span!("payspec.token_renewal")),
    );
}

/// A new token: the one held refreshed when it can be, else one issued.
async fn renew<S: SendsTokenRequests>(sender: &Arc<S>, from: RenewFrom) -> Result<Token, Error> {
    let identity = sender.identity();
    if let Some((refresh, bearer)) = from.refresh
        && let Some(request) = identity.refresh_request(&refresh, sender.base_url())?
    {
        match sender.send_token_request(&request, Some(&bearer)).await {
            Ok(answer) => match identity.token_from(&answer) {
                Ok(token) => return Ok(token),
                Err(error) => tracing::debug!(%error, "token refresh failed; issuing a new token"),
            },
            Err(error) => tracing::debug!(%error, "token refresh failed; issuing a new token"),
        }
    }
    let request = identity.issue_request(sender.base_url())?;
    let answer = sender.send_token_request(&request, None).await?;
    identity.token_from(&answer)
}

/// Revokes the current token, if any, and forgets it.
pub(crate) async fn revoke<S: SendsTokenRequests>(sender: &Arc<S>) -> Result<(), Error> {
    let identity = sender.identity();
    let Some((request, header, generation)) = identity.revoke_request(sender.base_url())? else {
        return Ok(());
    };
    sender.send_token_request(&request, Some(&header)).await?;
    identity.tokens().forget(generation);
    Ok(())
}
