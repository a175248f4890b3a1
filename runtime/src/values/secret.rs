//! Values that must never be shown: client secret, tokens.

use std::fmt;

/// A secret string (client secret, access or refresh token). `Debug` shows `"***"`; there
/// is no `Display`. Read it with [`Secret::expose`] only where it must travel.
///
/// ```
/// use payspec_runtime::Secret;
///
/// let secret = Secret::new("sk_live_51H");
/// assert_eq!(format!("{secret:?}"), "\"***\"");
/// assert_eq!(secret.expose(), "sk_live_51H");
/// ```
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}

impl serde::Serialize for Secret {
    /// Writes the secret value itself: serialization is how a secret parameter (a card
    /// PIN, an OTP) reaches a request body. `Debug` is what keeps it out of logs.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl crate::json::FromJson for Secret {
    fn read(
        reader: &mut crate::json::Reader<'_>,
        at: &crate::json::Path<'_>,
    ) -> Result<Self, crate::json::DecodeError> {
        reader.string(at, "a string").map(Secret)
    }

    fn from_json(
        value: crate::json::Json,
        at: &crate::json::Path<'_>,
    ) -> Result<Self, crate::json::DecodeError> {
        <String as crate::json::FromJson>::from_json(value, at).map(Secret)
    }
}

impl crate::json::ToJson for Secret {
    fn to_json(&self) -> crate::json::Json {
        crate::json::Json::String(self.0.clone())
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

/// The merchant's API credentials. `Debug` hides the client secret.
#[derive(Clone)]
pub struct Credentials {
    /// The client id.
    pub client_id: String,
    /// The client secret.
    pub client_secret: Secret,
    /// The account id, sent in the service's account header (`service.account_header`);
    /// `None` for a service that takes none.
    pub account_id: Option<String>,
}

impl Credentials {
    /// The environment variable read for the client id by [`from_env`](Self::from_env).
    pub const CLIENT_ID_VAR: &'static str = "PAYSPEC_CLIENT_ID";
    /// The environment variable read for the client secret.
    pub const CLIENT_SECRET_VAR: &'static str = "PAYSPEC_CLIENT_SECRET";
    /// The environment variable read for the parent account id.
    pub const ACCOUNT_ID_VAR: &'static str = "PAYSPEC_ACCOUNT_ID";

    /// Credentials from the environment: `PAYSPEC_CLIENT_ID` and `PAYSPEC_CLIENT_SECRET`,
    /// and `PAYSPEC_ACCOUNT_ID` where set (a client's builder, which knows whether its
    /// service takes an account id, requires it then).
    /// [`ErrorDetail::Config`](crate::ErrorDetail::Config) names every variable that is
    /// missing, blank or not Unicode (never a value).
    pub fn from_env() -> Result<Self, crate::error::Error> {
        Credentials::from_vars(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()), false)
    }

    /// [`from_env`](Self::from_env) over any source of variables (an unset or empty one is
    /// `None`); the account id required where `account` says.
    pub(crate) fn from_vars(
        read: impl Fn(&str) -> Option<String>,
        account: bool,
    ) -> Result<Self, crate::error::Error> {
        let (id, secret, account_id) =
            (read(Self::CLIENT_ID_VAR), read(Self::CLIENT_SECRET_VAR), read(Self::ACCOUNT_ID_VAR));
        match (id, secret, account_id) {
            (Some(id), Some(secret), account_id) if account_id.is_some() || !account => {
                Ok(Credentials { client_id: id, client_secret: secret.into(), account_id })
            }
            (id, secret, account_id) => {
                let missing: Vec<&str> = [
                    (id.is_none(), Self::CLIENT_ID_VAR),
                    (secret.is_none(), Self::CLIENT_SECRET_VAR),
                    (account && account_id.is_none(), Self::ACCOUNT_ID_VAR),
                ]
                .into_iter()
                .filter_map(|(missing, name)| missing.then_some(name))
                .collect();
                Err(crate::error::Error::config(format!(
                    "the credentials need {} set in the environment",
                    missing.join(", ")
                )))
            }
        }
    }

    /// Credentials from their three parts.
    pub fn new(
        client_id: impl Into<String>,
        client_secret: impl Into<Secret>,
        account_id: impl Into<String>,
    ) -> Self {
        Credentials {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            account_id: Some(account_id.into()),
        }
    }

    /// Credentials of a service that takes no account id: the client id and secret alone.
    ///
    /// ```
    /// use payspec_runtime::Credentials;
    /// let credentials = Credentials::without_account("MK_TEST_KEY", "client-secret");
    /// assert_eq!(credentials.account_id, None);
    /// assert!(!format!("{credentials:?}").contains("client-secret"));
    /// ```
    pub fn without_account(client_id: impl Into<String>, client_secret: impl Into<Secret>) -> Self {
        Credentials { client_id: client_id.into(), client_secret: client_secret.into(), account_id: None }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("account_id", &self.account_id)
            .finish()
    }
}
