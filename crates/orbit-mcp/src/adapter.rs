//! The MCP server itself: [`OrbitServer`] (an rmcp `ServerHandler` built
//! from the catalog, the name map and a host) and the stdio and in-memory
//! transports.

pub(crate) mod dispatch;
pub(crate) mod name_map;
pub(crate) mod schema;
pub(crate) mod structured;

use std::sync::Arc;

use rmcp::ServiceExt as _;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{Error, Result};
use crate::host::{McpHost, Transport};
use name_map::NameMap;

/// The server name MCP clients see (`mcp__orbit__...` in Claude Code): the
/// advertised-name length budget assumes it.
pub(crate) const SERVER_ALIAS: &str = "orbit";

/// Orbit's MCP server: one per connection (cheap to clone).
#[derive(Clone)]
pub struct OrbitServer {
    inner: Arc<Inner>,
    transport: Transport,
}

struct Inner {
    host: Arc<dyn McpHost>,
    tools: Vec<orbit_tools::ToolSpec>,
    names: NameMap,
    advertised: Vec<rmcp::model::Tool>,
}

impl std::fmt::Debug for OrbitServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrbitServer")
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl OrbitServer {
    /// A server over `host` offering the whole catalog. Fails when a name
    /// cannot be advertised or two names collide (never a silent rename).
    pub fn new(host: Arc<dyn McpHost>, transport: Transport) -> Result<Self> {
        Self::with_catalog(host, transport, orbit_tools::catalog())
    }

    /// A server offering `tools` (tests, and embedders that offer a subset).
    pub fn with_catalog(
        host: Arc<dyn McpHost>,
        transport: Transport,
        tools: Vec<orbit_tools::ToolSpec>,
    ) -> Result<Self> {
        let names = NameMap::build(tools.iter().map(|tool| tool.name), SERVER_ALIAS)?;
        let advertised = tools
            .iter()
            .map(|tool| schema::advertised_tool(tool, names.advertised(tool.name).unwrap_or("")))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            inner: Arc::new(Inner {
                host,
                tools,
                names,
                advertised,
            }),
            transport,
        })
    }

    /// The same server, for another transport.
    #[must_use]
    pub fn for_transport(&self, transport: Transport) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            transport,
        }
    }

    /// The name map in use.
    pub fn names(&self) -> &NameMap {
        &self.inner.names
    }
}

/// Serves MCP on this process's stdin and stdout until the client closes.
pub async fn serve_stdio(server: OrbitServer) -> Result<()> {
    let server = server.for_transport(Transport::Stdio);
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|error| Error::Session(error.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|error| Error::Session(error.to_string()))?;
    Ok(())
}

/// Serves MCP (newline-delimited JSON-RPC) over any byte stream until it
/// closes: the in-memory duplex of tests, a socket.
pub async fn serve_io<S>(server: OrbitServer, stream: S) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let running = server
        .serve(stream)
        .await
        .map_err(|error| Error::Session(error.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|error| Error::Session(error.to_string()))?;
    Ok(())
}
