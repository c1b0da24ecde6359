//! The key change feed on Postgres: creating or revoking a key sends `NOTIFY` on [`CHANNEL`] in
//! the same statement (so it is delivered if and only if the change commits), and the first
//! watcher of a store starts one task that `LISTEN`s on a dedicated connection and publishes
//! what it hears, so every server process on the database learns of every change within
//! milliseconds.
//!
//! Each time the listener connects (the first time and after any lost connection) it publishes
//! [`KeyChange::Resync`] once `LISTEN` is in force: notifications sent while it was away are
//! lost, so caches drop everything instead. Channels are per database, not per schema: stores
//! on other schemas of the same database hear each other's key ids, which costs them only a
//! needless cache miss.
//!
//! Behind a transaction-mode pooler a `LISTEN` would be run on a server connection the pooler
//! then lends to other clients, and hear nothing: there the listener uses its own URL
//! (`--postgres-listen-url`, direct or session-pooled), or, without one, tells watchers to
//! resync every [`RESYNC_INTERVAL`].

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use checkpointd_storage::keys::{KeyChange, KeyChanges, KeyWatch};

/// The notification channel; the payload is the key id.
pub(crate) const CHANNEL: &str = "checkpointd_api_keys";

/// The first wait before connecting again; doubled after each failure up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// An idle listening connection sends nothing, so a dead server would only be noticed by TCP
/// keepalive; these find it in well under a minute (caches are bounded by their TTL meanwhile).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;

/// How often caches resync when there is no `LISTEN` to tell them of changes: the longest a
/// revoked key stays usable in another server process behind a transaction-mode pooler
/// without `--postgres-listen-url`.
pub(crate) const RESYNC_INTERVAL: Duration = Duration::from_secs(5);

/// The store's side of the feed: what its own writes publish, and the listener it starts for
/// its first watcher, stopped when the store is dropped.
pub(crate) struct KeyFeed {
    changes: Arc<KeyChanges>,
    /// Where other processes' changes come from; `None`: a resync every [`RESYNC_INTERVAL`].
    listen: Option<(tokio_postgres::Config, MakeRustlsConnect)>,
    /// Dropped with the store, which ends the listener.
    stop: OnceLock<oneshot::Sender<()>>,
}

impl KeyFeed {
    /// A feed that `LISTEN`s on its own session connection to `config`, which must reach a
    /// server process it keeps (directly or through a session-mode pooler).
    pub(crate) fn listening(
        mut config: tokio_postgres::Config,
        connector: MakeRustlsConnect,
    ) -> Self {
        config
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES);
        Self {
            changes: Arc::new(KeyChanges::new()),
            listen: Some((config, connector)),
            stop: OnceLock::new(),
        }
    }

    /// A feed with no session to `LISTEN` on (behind a transaction-mode pooler): watchers
    /// are told to resync every [`RESYNC_INTERVAL`], so a change made by another process
    /// reaches them that late at most.
    pub(crate) fn polling() -> Self {
        Self {
            changes: Arc::new(KeyChanges::new()),
            listen: None,
            stop: OnceLock::new(),
        }
    }

    /// Tells this process's watchers at once, without waiting for the notification's echo.
    pub(crate) fn publish(&self, change: KeyChange) {
        self.changes.publish(change);
    }

    /// A watcher; the first one starts the listener (outside a tokio runtime there is none,
    /// and watchers hear only this process's changes).
    pub(crate) fn subscribe(&self) -> KeyWatch {
        let watch = self.changes.subscribe();
        if tokio::runtime::Handle::try_current().is_ok() {
            self.stop.get_or_init(|| {
                let (stop, stopped) = oneshot::channel();
                match &self.listen {
                    Some((config, connector)) => tokio::spawn(listen(
                        config.clone(),
                        connector.clone(),
                        self.changes.clone(),
                        stopped,
                    )),
                    None => {
                        tokio::spawn(resync_every(RESYNC_INTERVAL, self.changes.clone(), stopped))
                    }
                };
                stop
            });
        }
        watch
    }
}

/// Publishes a resync every `interval` until `stopped`: the stand-in for `LISTEN` where no
/// session can hold one.
async fn resync_every(
    interval: Duration,
    changes: Arc<KeyChanges>,
    mut stopped: oneshot::Receiver<()>,
) {
    tracing::info!(
        every = ?interval,
        "no postgres session for the api key listener (--postgres-statements unnamed without \
         --postgres-listen-url): key caches resync on a timer"
    );
    let mut ticks = tokio::time::interval(interval);
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            _ = ticks.tick() => changes.publish(KeyChange::Resync),
        }
    }
}

/// Listens until `stopped`, connecting again after each lost connection.
async fn listen(
    config: tokio_postgres::Config,
    connector: MakeRustlsConnect,
    changes: Arc<KeyChanges>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut retry = FIRST_RETRY;
    loop {
        let mut listened = false;
        let session = listen_once(&config, connector.clone(), &changes, &mut listened);
        let why = tokio::select! {
            _ = &mut stopped => return,
            why = session => why,
        };
        if listened {
            retry = FIRST_RETRY;
        }
        tracing::warn!(
            error = %why,
            retry_in = ?retry,
            "lost the api key listener; cached keys expire by their ttl until it is back"
        );
        tokio::select! {
            _ = &mut stopped => return,
            () = tokio::time::sleep(retry) => {}
        }
        retry = (retry * 2).min(MAX_RETRY);
    }
}

/// One connection's life: connect, `LISTEN`, publish a resync, then every notification, until
/// the connection fails; why it ended.
async fn listen_once(
    config: &tokio_postgres::Config,
    connector: MakeRustlsConnect,
    changes: &KeyChanges,
    listened: &mut bool,
) -> String {
    let (client, mut connection) = match config.connect(connector).await {
        Ok(pair) => pair,
        Err(error) => return error.to_string(),
    };
    let statement = format!("LISTEN {CHANNEL}");
    let listen = client.batch_execute(&statement);
    tokio::pin!(listen);
    loop {
        // The connection is polled alongside LISTEN, which makes no progress otherwise.
        tokio::select! {
            result = &mut listen, if !*listened => match result {
                Ok(()) => {
                    *listened = true;
                    changes.publish(KeyChange::Resync);
                }
                Err(error) => return error.to_string(),
            },
            message = std::future::poll_fn(|cx| connection.poll_message(cx)) => match message {
                Some(Ok(AsyncMessage::Notification(notification))) => {
                    changes.publish(KeyChange::Key(notification.payload().to_owned()));
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return error.to_string(),
                None => return "connection closed".into(),
            },
        }
    }
}
