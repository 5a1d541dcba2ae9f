/// Where a `ChatClient` sends its request lines and reads the engine's lines: a `chatfeedd`
/// child process (`ChildProcessTransport`) or the engine in-process.
///
/// `connect()` is called once at start and again after a connection ends on its own (the child
/// died, the engine was closed under the client): each call opens a fresh connection.
public protocol ChatfeedTransport: Sendable {
    /// Opens a connection. A throw means the transport cannot be opened (no executable, a
    /// database that cannot be created); the client reports it and does not retry.
    func connect() async throws -> any ChatfeedConnection

    /// How the client reopens a connection that ended on its own (default: `.local`).
    var reconnectPolicy: ReconnectPolicy { get }
}

extension ChatfeedTransport {
    public var reconnectPolicy: ReconnectPolicy { .local }
}

/// One open connection to an engine: JSON-RPC lines in both directions (docs/PROTOCOL.md).
public protocol ChatfeedConnection: Sendable {
    /// The engine's output, one line per element without its `\n`, in order. It finishes when the
    /// connection ends, whoever ended it.
    var lines: AsyncStream<[UInt8]> { get }

    /// Sends one line (the bytes of one JSON-RPC message, `\n` included), after the lines sent
    /// before. Throws when the connection is gone. Called on the client's actor: it must not wait
    /// for the engine to read (the engine may wait for the client to read its lines first), only
    /// queue the line — or write it to a pipe that the engine's reader empties on its own.
    func send(_ line: [UInt8]) throws

    /// Ends the connection gracefully: the engine commits what it has read and answers it, then
    /// `lines` finishes. Waits for that.
    func close() async

    /// Why the connection ended, when it ended on its own (an exit status and the end of the
    /// child's stderr, say); nil while it runs.
    var endReason: String? { get }
}
