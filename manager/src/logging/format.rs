//! A log format as one function of an event's metadata and fields ([`LineFormat`]), and the
//! tracing-subscriber formatter that records an event and writes its line ([`Lines`]): what
//! klog's text format and component-base's JSON format have in common.

use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::fields::Fields;

/// One event as one line, without the trailing newline.
pub(crate) trait LineFormat {
    /// The line for an event logged at `metadata` with `fields`, written now.
    fn line(&self, metadata: &Metadata<'_>, fields: &Fields) -> String;
}

/// The event formatter of a [`LineFormat`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Lines<F>(pub F);

impl<S, N, F> FormatEvent<S, N> for Lines<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: LineFormat,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        writeln!(writer, "{}", self.0.line(event.metadata(), &fields))
    }
}
