//! The approval inbox: one page of the tenant's tasks waiting in `input_required`, filtered
//! (action, age), sorted (oldest or newest request first) and paged in the queue itself, with
//! counts; the view lives in the URL (`?action=&age=&sort=&page=&size=`), so it can be
//! bookmarked and the live refresh fetches the same view. Each task is one compact card
//! ([`super::inbox_card`]) with its decision in view.

use std::fmt::Write;
use std::time::{Duration, SystemTime};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::inbox_card::card;
use super::{refused, render};
use crate::console::Shared;
use crate::console::calls::request;
use crate::console::gate::{Query, failure};
use crate::console::html::{escape, notice, url_part};
use crate::console::live;
use crate::console::session::Session;
use crate::proto::{self, TaskState};
use checkpointd_storage::queue::{MAX_WAITING_PAGE, WaitingPage, WaitingQuery};

/// Tasks per page unless `size` says otherwise: about what fits a screen or two as cards.
pub const DEFAULT_PAGE_SIZE: usize = 20;

/// The highest page number accepted; far beyond any real inbox, it keeps the offset small.
const MAX_PAGE: usize = 100_000;

/// The longest action filter accepted, as long as an action may be.
const MAX_ACTION_BYTES: usize = 256;

/// The ages the filter offers, as the URL spells them and as people read them.
const AGES: [(&str, &str); 4] = [
    ("5m", "5 minutes"),
    ("1h", "an hour"),
    ("1d", "a day"),
    ("7d", "a week"),
];

/// What the URL asks for, parsed once; a value it cannot be is a 400 naming the parameter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InboxView {
    pub action: Option<String>,
    /// Waiting at least this long; kept as written, for the links.
    pub age: Option<(String, Duration)>,
    pub newest_first: bool,
    /// 1-based.
    pub page: usize,
    pub size: usize,
}

impl InboxView {
    /// The view `query` names; `Err` says which parameter is wrong and what it may be.
    pub fn parse(query: &crate::console::gate::Form) -> Result<Self, String> {
        let value = |name: &str| {
            query
                .get(name)
                .map(String::as_str)
                .filter(|v| !v.is_empty())
        };
        let number = |name: &str, default: usize, most: usize| match value(name) {
            None => Ok(default),
            Some(raw) => raw
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=most).contains(n))
                .ok_or_else(|| {
                    format!("{name} must be a whole number from 1 to {most}, not {raw:?}")
                }),
        };
        let action = match value("action") {
            Some(action) if action.len() > MAX_ACTION_BYTES => {
                return Err(format!(
                    "action must be at most {MAX_ACTION_BYTES} bytes long"
                ));
            }
            action => action.map(str::to_owned),
        };
        let age = match value("age") {
            None => None,
            Some(raw) => match humantime::parse_duration(raw) {
                Ok(age) if !age.is_zero() && age < Duration::from_secs(3650 * 86_400) => {
                    Some((raw.to_owned(), age))
                }
                _ => {
                    return Err(format!(
                        "age must be a duration such as 5m, 1h or 2d, not {raw:?}"
                    ));
                }
            },
        };
        let newest_first = match value("sort") {
            None | Some("oldest") => false,
            Some("newest") => true,
            Some(raw) => return Err(format!("sort must be oldest or newest, not {raw:?}")),
        };
        Ok(Self {
            action,
            age,
            newest_first,
            page: number("page", 1, MAX_PAGE)?,
            size: number("size", DEFAULT_PAGE_SIZE, MAX_WAITING_PAGE)?,
        })
    }

    /// The queue's query for this view at `now`.
    fn query(&self, now: SystemTime) -> WaitingQuery {
        WaitingQuery {
            action: self.action.clone(),
            requested_before: self.age.as_ref().and_then(|(_, age)| now.checked_sub(*age)),
            newest_first: self.newest_first,
            offset: (self.page - 1) * self.size,
            limit: self.size,
        }
    }

    /// This view's URL query (without `?`) at `page`, only what differs from the defaults:
    /// the links of the pager and the way back after a decision.
    pub fn link(&self, page: usize) -> String {
        let mut parts = Vec::new();
        if let Some(action) = &self.action {
            parts.push(format!("action={}", url_part(action)));
        }
        if let Some((age, _)) = &self.age {
            parts.push(format!("age={}", url_part(age)));
        }
        if self.newest_first {
            parts.push("sort=newest".to_owned());
        }
        if self.size != DEFAULT_PAGE_SIZE {
            parts.push(format!("size={}", self.size));
        }
        if page != 1 {
            parts.push(format!("page={page}"));
        }
        parts.join("&")
    }
}

/// `GET /inbox`.
pub async fn show(
    State(console): State<Shared>,
    session: Session,
    Query(query): Query,
) -> Response {
    // Taken before the list is read, so an event raised meanwhile still refreshes the page.
    let rendered = SystemTime::now();
    let view = match InboxView::parse(&query) {
        Ok(view) => view,
        Err(problem) => return failure(StatusCode::BAD_REQUEST, &problem),
    };
    let service = match console.calls.inbox() {
        Ok(service) => service,
        Err(status) => return refused(&status),
    };
    // The role check a List over gRPC gets; the tenant is the session's.
    let list = proto::ListRequest {
        state: TaskState::InputRequired as i32,
        ..Default::default()
    };
    if let Err(status) = request(&session.context, "TaskService/List", list) {
        return refused(&status);
    }
    let page = match service
        .list_waiting(&session.context.tenant, &view.query(rendered))
        .await
    {
        Ok(page) => page,
        Err(error) => return refused(&crate::grpc::status::to_status(error)),
    };
    let mut body = String::new();
    if let (Some(done), Some(task)) = (query.get("done"), query.get("task")) {
        body.push_str(&notice("Done", &format!("task {task}: {done}")));
    }
    body.push_str(&filters(&view, &page));
    body.push_str(&counts(&view, &page));
    let default_resume = service.auto_resume_hitl_default();
    let back = format!("inbox?{}", view.link(view.page));
    for task in &page.tasks {
        let task = crate::grpc::task_to_wire(task.clone());
        body.push_str(&card(&console, &session, &task, &back, rendered).await);
    }
    body.push_str(&pager(&view, &page));
    let _ = write!(
        body,
        r#"<p class="hint">Tasks enqueued without a say of their own {} after a decision (this server's <code>--auto-resume-hitl</code>).</p>"#,
        if default_resume {
            "resume at once"
        } else {
            "stay parked until resumed"
        }
    );
    body.push_str(&live::marker(&live::inbox_url(rendered)));
    render(&session, "Approval inbox", "Inbox", &body)
}

/// The filter and sort form: a GET of the same page, so the result is a URL too. Changing a
/// filter starts again at page 1 (the form carries no page).
fn filters(view: &InboxView, page: &WaitingPage) -> String {
    let selected = |yes: bool| if yes { " selected" } else { "" };
    let mut actions = format!(
        r#"<option value=""{}>any ({})</option>"#,
        selected(view.action.is_none()),
        page.waiting
    );
    let mut listed = false;
    for (action, count) in &page.actions {
        let here = view.action.as_deref() == Some(action.as_str());
        listed |= here;
        let _ = write!(
            actions,
            r#"<option value="{a}"{s}>{a} ({count})</option>"#,
            a = escape(action),
            s = selected(here),
        );
    }
    if let (Some(action), false) = (&view.action, listed) {
        // An action no task asks for (any more): still shown, so the form says what is on.
        let _ = write!(
            actions,
            r#"<option value="{a}" selected>{a} (0)</option>"#,
            a = escape(action)
        );
    }
    let current_age = view.age.as_ref().map(|(raw, _)| raw.as_str());
    let mut ages = format!(
        r#"<option value=""{}>any age</option>"#,
        selected(current_age.is_none())
    );
    let mut age_listed = current_age.is_none();
    for (value, label) in AGES {
        let here = current_age == Some(value);
        age_listed |= here;
        let _ = write!(
            ages,
            r#"<option value="{value}"{}>waiting at least {label}</option>"#,
            selected(here)
        );
    }
    if let (Some(raw), false) = (current_age, age_listed) {
        let _ = write!(
            ages,
            r#"<option value="{r}" selected>waiting at least {r}</option>"#,
            r = escape(raw)
        );
    }
    let size = if view.size == DEFAULT_PAGE_SIZE {
        String::new()
    } else {
        format!(r#"<input type="hidden" name="size" value="{}">"#, view.size)
    };
    format!(
        r#"<form method="get" action="/inbox" class="filters" role="search" aria-label="Filter the inbox">
<label>Action <select name="action">{actions}</select></label>
<label>Age <select name="age">{ages}</select></label>
<label>Order <select name="sort"><option value="oldest"{oldest}>oldest request first</option><option value="newest"{newest}>newest request first</option></select></label>{size}
<button type="submit">Show</button></form>"#,
        oldest = selected(!view.newest_first),
        newest = selected(view.newest_first),
    )
}

/// The last page number for `matching` tasks (1 when there are none).
fn last_page(matching: u64, size: usize) -> usize {
    (matching as usize).div_ceil(size).max(1)
}

/// How many wait, how many match, which of them this page shows.
fn counts(view: &InboxView, page: &WaitingPage) -> String {
    if page.waiting == 0 {
        return r#"<p class="counts" id="inbox-counts">Nothing is waiting for a decision.</p>"#
            .to_owned();
    }
    let first = (view.page - 1) * view.size + 1;
    let shown = if page.tasks.is_empty() {
        format!(
            "page {} is past the last page ({})",
            view.page,
            last_page(page.matching, view.size)
        )
    } else {
        format!("showing {first}–{}", first + page.tasks.len() - 1)
    };
    let filtered = view.action.is_some() || view.age.is_some();
    let matching = if filtered {
        format!(", <strong>{}</strong> match the filters", page.matching)
    } else {
        String::new()
    };
    format!(
        r#"<p class="counts" id="inbox-counts"><strong>{}</strong> waiting{matching}; {shown}.</p>"#,
        page.waiting
    )
}

/// Previous and next links (the view kept), and where this page is among them.
fn pager(view: &InboxView, page: &WaitingPage) -> String {
    if page.matching == 0 {
        return String::new();
    }
    let last = last_page(page.matching, view.size);
    let href = |n: usize| match view.link(n) {
        link if link.is_empty() => "/inbox".to_owned(),
        link => format!("/inbox?{link}"),
    };
    let previous = if view.page > 1 {
        format!(
            r#"<a href="{}" rel="prev">← Previous</a>"#,
            escape(&href((view.page - 1).min(last)))
        )
    } else {
        String::new()
    };
    let next = if view.page < last {
        format!(
            r#"<a href="{}" rel="next">Next →</a>"#,
            escape(&href(view.page + 1))
        )
    } else {
        String::new()
    };
    format!(
        r#"<nav class="pager" aria-label="Inbox pages">{previous} <span>page {} of {last}</span> {next}</nav>"#,
        view.page
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::gate::form;

    fn parse(query: &str) -> Result<InboxView, String> {
        InboxView::parse(&form(query.as_bytes()))
    }

    #[test]
    fn the_view_round_trips_through_its_link_and_defaults_are_left_out() {
        let view = parse("action=send%20email&age=1h&sort=newest&page=3&size=50").unwrap();
        assert_eq!(view.action.as_deref(), Some("send email"));
        assert_eq!(view.age, Some(("1h".into(), Duration::from_secs(3600))));
        assert!(view.newest_first);
        assert_eq!((view.page, view.size), (3, 50));
        assert_eq!(parse(&view.link(3)).unwrap(), view);
        assert_eq!(
            view.link(1),
            "action=send%20email&age=1h&sort=newest&size=50"
        );
        assert_eq!(parse("").unwrap().link(1), "");
        let query = view.query(SystemTime::UNIX_EPOCH + Duration::from_secs(7200));
        assert_eq!(query.offset, 100);
        assert_eq!(
            query.requested_before,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(3600))
        );
    }

    #[test]
    fn a_bad_value_names_its_parameter() {
        for (query, names) in [
            ("page=0", "page"),
            ("page=x", "page"),
            ("size=1000", "size"),
            ("sort=sideways", "sort"),
            ("age=soon", "age"),
            ("age=0s", "age"),
        ] {
            let problem = parse(query).unwrap_err();
            assert!(problem.starts_with(names), "{query}: {problem}");
        }
        assert!(parse(&format!("action={}", "a".repeat(257))).is_err());
    }
}
