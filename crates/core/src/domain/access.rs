//! Who a caller is and what it may do: roles, tenant scopes, identities, and API keys in their
//! wire form (`ckpt_<id>_<secret>`), of which only a hash is ever stored.

use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::Tenant;
use crate::error::Error;

/// What a credential may do; each role has every right of the roles before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Checkpoints, the tool journal, and claiming and working its tenant's tasks.
    Agent,
    /// Also decides approvals, requeues, cancels, pins, sets retention, deletes and repairs.
    Operator,
    /// Everything, in every tenant (when the credential is bound to all of them).
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(raw: &str) -> Result<Self, Error> {
        match raw {
            "agent" => Ok(Role::Agent),
            "operator" => Ok(Role::Operator),
            "admin" => Ok(Role::Admin),
            other => Err(Error::InvalidArgument(format!(
                "unknown role {other:?}: use agent, operator or admin"
            ))),
        }
    }
}

/// The tenants a credential may act in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TenantScope {
    One(Tenant),
    /// Every tenant; only admin credentials are bound this way.
    All,
}

/// The verified caller of one RPC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Who, as recorded in approvals and repairs: `key:<id>` or a JWT's `sub`.
    pub subject: String,
    pub tenant: TenantScope,
    pub role: Role,
    /// `false` only for the stand-in identity of a server running with auth `none`, whose
    /// caller says who it is in the request, as before authentication existed.
    pub authenticated: bool,
}

impl Identity {
    /// The caller of a server without authentication: any tenant, any RPC.
    pub fn anonymous() -> Self {
        Self {
            subject: "anonymous".to_owned(),
            tenant: TenantScope::All,
            role: Role::Admin,
            authenticated: false,
        }
    }

    /// The tenant a call runs in: the credential's own, or for an all-tenants credential the
    /// one `requested` names (`default` when none). Naming another tenant than the
    /// credential's is refused before anything is read.
    pub fn tenant_for(&self, requested: Option<Tenant>) -> Result<Tenant, Error> {
        match (&self.tenant, requested) {
            (TenantScope::All, requested) => Ok(requested.unwrap_or_else(Tenant::default_tenant)),
            (TenantScope::One(own), None) => Ok(own.clone()),
            (TenantScope::One(own), Some(requested)) if requested == *own => Ok(requested),
            (TenantScope::One(_), Some(_)) => Err(Error::TenantMismatch(
                "this credential may not act in the tenant the request names".into(),
            )),
        }
    }
}

/// Bytes of randomness in a key's secret half.
const SECRET_BYTES: usize = 32;
/// Bytes of randomness in a key's id.
const ID_BYTES: usize = 8;
const KEY_PREFIX: &str = "ckpt_";

/// A freshly made API key: the whole token, shown once, and what is stored of it.
pub struct NewApiKey {
    /// `ckpt_<id>_<secret>`, for the caller's `authorization: Bearer` header.
    pub token: String,
    pub id: String,
    pub secret_hash: Vec<u8>,
}

impl NewApiKey {
    /// A key with a random id and a random 256-bit secret.
    pub fn generate() -> Result<Self, Error> {
        let mut id = [0u8; ID_BYTES];
        let mut secret = [0u8; SECRET_BYTES];
        getrandom::fill(&mut id)
            .and_then(|()| getrandom::fill(&mut secret))
            .map_err(|error| Error::internal_from("no randomness for a new key", error))?;
        let (id, secret) = (hex::encode(id), hex::encode(secret));
        Ok(Self {
            token: format!("{KEY_PREFIX}{id}_{secret}"),
            secret_hash: hash_secret(&secret),
            id,
        })
    }
}

/// A bearer token in API-key form, split into the id (for the lookup) and the secret.
pub struct PresentedKey<'a> {
    pub id: &'a str,
    pub secret: &'a str,
}

impl<'a> PresentedKey<'a> {
    /// `None` for anything that is not `ckpt_<id>_<secret>` with hex halves of the right size.
    pub fn parse(token: &'a str) -> Option<Self> {
        let (id, secret) = token.strip_prefix(KEY_PREFIX)?.split_once('_')?;
        let hex_of = |text: &str, bytes: usize| {
            text.len() == bytes * 2 && text.bytes().all(|b| b.is_ascii_hexdigit())
        };
        (hex_of(id, ID_BYTES) && hex_of(secret, SECRET_BYTES)).then_some(Self { id, secret })
    }

    /// Whether the secret hashes to `stored`, compared in constant time so the time taken
    /// does not reveal how much of a guess was right.
    pub fn matches(&self, stored: &[u8]) -> bool {
        let presented = hash_secret(self.secret);
        presented.len() == stored.len()
            && presented
                .iter()
                .zip(stored)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// SHA-256 of the secret's text. A plain hash suffices: the secret is 256 random bits, so
/// there is nothing for a slow hash to protect against guessing.
fn hash_secret(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// One stored API key: never its secret, only the secret's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKey {
    pub id: String,
    pub secret_hash: Vec<u8>,
    /// `TenantScope::All` only for admin keys.
    pub tenant: TenantScope,
    pub role: Role,
    pub name: String,
    pub created_at: SystemTime,
    pub revoked_at: Option<SystemTime>,
}

impl ApiKey {
    /// The identity a caller presenting this key acts as.
    pub fn identity(&self) -> Identity {
        Identity {
            subject: format!("key:{}", self.id),
            tenant: self.tenant.clone(),
            role: self.role,
            authenticated: true,
        }
    }
}

/// Refuses a binding to all tenants for any role below admin.
pub fn check_binding(tenant: &TenantScope, role: Role) -> Result<(), Error> {
    if *tenant == TenantScope::All && role != Role::Admin {
        return Err(Error::InvalidArgument(
            "only admin credentials may be bound to all tenants; name a tenant".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_parses_back_and_matches_only_its_own_hash() {
        let key = NewApiKey::generate().unwrap();
        let presented = PresentedKey::parse(&key.token).unwrap();
        assert_eq!(presented.id, key.id);
        assert!(presented.matches(&key.secret_hash));
        let other = NewApiKey::generate().unwrap();
        assert!(!presented.matches(&other.secret_hash));
        assert!(!presented.matches(&[]));
    }

    #[test]
    fn malformed_tokens_are_not_keys() {
        for token in [
            "",
            "ckpt_",
            "ckpt_abc_def",
            "key_0011223344556677_00",
            "eyJhbGciOi.x.y",
        ] {
            assert!(PresentedKey::parse(token).is_none(), "{token}");
        }
    }

    #[test]
    fn a_one_tenant_credential_may_name_only_its_own_tenant() {
        let tenant = |name: &str| Tenant::parse(name).unwrap();
        let agent = Identity {
            subject: "key:1".into(),
            tenant: TenantScope::One(tenant("a")),
            role: Role::Agent,
            authenticated: true,
        };
        assert_eq!(agent.tenant_for(None).unwrap(), tenant("a"));
        assert_eq!(agent.tenant_for(Some(tenant("a"))).unwrap(), tenant("a"));
        assert!(matches!(
            agent.tenant_for(Some(tenant("b"))),
            Err(Error::TenantMismatch(_))
        ));
        let admin = Identity::anonymous();
        assert_eq!(admin.tenant_for(None).unwrap(), Tenant::default_tenant());
        assert_eq!(admin.tenant_for(Some(tenant("b"))).unwrap(), tenant("b"));
    }

    #[test]
    fn only_admins_may_be_bound_to_all_tenants() {
        assert!(check_binding(&TenantScope::All, Role::Operator).is_err());
        assert!(check_binding(&TenantScope::All, Role::Admin).is_ok());
    }
}
