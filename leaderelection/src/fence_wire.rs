//! The write fence at the wire: connections whose bytes leave only while the fence is open.
//!
//! [`FenceLayer`](crate::FenceLayer) checks a write when the client's stack calls it; between
//! that check and the bytes reaching the socket lie the connection pool, a TLS handshake and
//! the connection's task. A process stopped (SIGSTOP, a frozen VM) in that gap and continued
//! after its lease passed to another holder would send a write its fence let through when it
//! was still safe. [`FencedConnector`] closes most of that gap: it wraps the transport under TLS
//! so that every write to the socket checks the fence first, and fails with [`Fenced`] (as an
//! I/O error) once the fence has closed. The request is then never complete at the server: the
//! part already written (if any) is discarded with the broken connection. What remains is the
//! instant between this check and the `write` system call, and bytes already in the kernel's
//! buffer, which reach the server long before the lease can expire.
//!
//! Every request of the connection is checked, reads included: use it for the clients whose
//! writes are fenced (the controllers'), not for the informers' or the elector's own client.
//! [`FenceLayer`](crate::FenceLayer) turns the connection's refusal back into a [`Fenced`]
//! error, so callers see one kind of refusal wherever it happened.
//!
//! ```no_run
//! # fn demo(config: kube::Config) -> Result<(), Box<dyn std::error::Error>> {
//! use hyper_util::client::legacy::connect::HttpConnector;
//! use kcm_leaderelection::{FenceLayer, FencedConnector, WriteFence};
//! use kube::client::ConfigExt;
//!
//! let fence = WriteFence::new("kube-system/my-controller");
//! let mut http = HttpConnector::new();
//! http.enforce_http(false);
//! let https = config.rustls_https_connector_with_connector(FencedConnector::new(http, fence.clone()))?;
//! let hyper = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
//!     .build::<_, kube::client::Body>(https);
//! let service = tower::ServiceBuilder::new()
//!     .layer(FenceLayer::new(fence.clone()))
//!     .layer(config.base_uri_layer())
//!     .option_layer(config.auth_layer()?)
//!     .map_err(tower::BoxError::from)
//!     .service(hyper);
//! let client = kube::Client::new(service, config.default_namespace.clone());
//! # let _ = client; Ok(()) }
//! ```

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};

use crate::fence::{Fenced, WriteFence};

/// A connector whose connections write only while `fence` is open (see the
/// [crate documentation](crate)).
#[derive(Clone, Debug)]
pub struct FencedConnector<C> {
    inner: C,
    fence: WriteFence,
}

impl<C> FencedConnector<C> {
    /// Wraps `inner` (a plain TCP connector: put TLS on top, so that the check is the last
    /// step before the socket).
    pub fn new(inner: C, fence: WriteFence) -> Self {
        FencedConnector { inner, fence }
    }
}

impl<C> tower::Service<http::Uri> for FencedConnector<C>
where
    C: tower::Service<http::Uri>,
    C::Future: Send + 'static,
{
    type Response = FencedConnection<C::Response>;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, C::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let fence = self.fence.clone();
        Box::pin(async move {
            let io = connecting.await?;
            Ok(FencedConnection { io, fence })
        })
    }
}

/// A connection made by [`FencedConnector`]: reads pass, writes check the fence first.
#[derive(Debug)]
pub struct FencedConnection<T> {
    io: T,
    fence: WriteFence,
}

impl<T> FencedConnection<T> {
    fn refused(&self) -> Option<io::Error> {
        self.fence.check().err().map(refusal)
    }
}

/// The I/O error carrying a refusal ([`is_fenced`](crate::is_fenced) finds it).
fn refusal(fenced: Fenced) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, fenced)
}

impl<T: Read + Unpin> Read for FencedConnection<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for FencedConnection<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(refused) = self.refused() {
            return Poll::Ready(Err(refused));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(refused) = self.refused() {
            return Poll::Ready(Err(refused));
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl<T: Connection> Connection for FencedConnection<T> {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;

    /// A transport recording what was written.
    #[derive(Default)]
    struct Sink(Vec<u8>);

    impl Write for Sink {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.0.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn write(conn: &mut FencedConnection<Sink>, bytes: &[u8]) -> io::Result<usize> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        match Pin::new(conn).poll_write(&mut cx, bytes) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::Error::other("pending")),
        }
    }

    #[test]
    fn bytes_leave_only_while_the_fence_is_open() {
        let fence = WriteFence::new("ns/l");
        let mut conn = FencedConnection {
            io: Sink::default(),
            fence: fence.clone(),
        };
        let closed = write(&mut conn, b"POST /a").expect_err("a closed fence refuses");
        assert_eq!(closed.kind(), io::ErrorKind::PermissionDenied);
        assert!(crate::fence::is_fenced(&closed), "{closed}");
        assert!(conn.io.0.is_empty());

        fence.open_until(Instant::now() + Duration::from_secs(60));
        assert_eq!(write(&mut conn, b"POST /b").expect("open"), 7);

        // Past its deadline (the process was stopped, or the renewals failed): refused again.
        fence.open_until(Instant::now() - Duration::from_millis(1));
        assert!(write(&mut conn, b"POST /c").is_err());
        fence.close();
        assert!(write(&mut conn, b"POST /d").is_err());
        assert_eq!(conn.io.0, b"POST /b");
        assert_eq!(fence.refused_total(), 3);
    }
}
