import Logging

/// The engine in-process with one session, as TDLib's JSON interface: JSON-RPC request lines in
/// through `send`, response and notification lines out through `lines` — the same protocol as
/// `chatfeedd`'s stdin and stdout (docs/PROTOCOL.md), no pipes, no process. To share one engine
/// among several clients, open a `ChatEngine` and a session each (`openInProcessSession()`).
///
/// For an iOS app, where no process can be spawned. Close it with `close()`: pending writes
/// commit, answers are delivered, then `lines` finishes and the engine stops.
public final class InProcessEngine: Sendable {
    public let engine: ChatEngine
    public let session: InProcessSession

    /// Opens (or creates) the database of `options` and loads the chat list on the caller's
    /// thread (so that a database that cannot be opened throws here), then starts the engine thread.
    public init(options: EngineOptions, logger: Logger = Logger(label: "chatfeed.engine")) throws {
        let engine = try ChatEngine(options: options, logger: logger)
        self.engine = engine
        let output = LineOutput(limitBytes: options.sessionOutputLimitBytes)
        let ended = Flag()
        let record = engine.openSession(output: output, onEnd: {
            ended.set()
            engine.stop()
        })
        session = InProcessSession(session: record, output: output, ended: ended)
    }

    /// The engine's lines, each without its `\n`, in order. Finishes when the engine stops.
    public var lines: AsyncStream<[UInt8]> { session.lines }

    /// Hands request bytes (whole lines, each ending in `\n`) to the engine. Waits while the
    /// engine's input queue is full (256 KiB) or the output is backed up; returns false once the
    /// engine has stopped.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool { session.send(bytes) }

    /// Ends the input: the engine answers what it has, commits and stops; `lines` then finishes.
    public func close() { session.close() }

    /// True once the engine thread has ended.
    public var isStopped: Bool { engine.isStopped }
}
