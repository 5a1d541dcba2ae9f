import Foundation
import Logging
import Synchronization

/// Where the engine writes its lines: stdout for the daemon, an async sequence in-process.
protocol EngineOutput: AnyObject {
    /// Queues bytes (whole lines) for the next `flush()`.
    func enqueue(_ bytes: [UInt8])
    /// Delivers what is queued; false once the reader is gone.
    @discardableResult func flush() -> Bool
    /// True when the reader is gone, found without writing.
    var isPeerGone: Bool { get }
}

/// The engine in-process, as TDLib's JSON interface: JSON-RPC request lines in through `send`,
/// response and notification lines out through `lines` — the same protocol as `chatfeedd`'s
/// stdin and stdout (docs/PROTOCOL.md), no pipes, no process. One engine thread owns the store and
/// the feed, as in the daemon; `chatfeedd` is this engine over stdin and stdout.
///
/// For an iOS app, where no process can be spawned. Close it with `close()`: pending writes
/// commit, answers are delivered, then `lines` finishes.
public final class InProcessEngine: Sendable {
    /// The engine's lines, each without its `\n`, in order. Finishes when the engine stops.
    public let lines: AsyncStream<[UInt8]>
    private let queue = InputQueue()
    private let shutdown = ShutdownRequest()
    private let stopped = Flag()

    /// Opens (or creates) the database of `options` and loads the chat list on the caller's
    /// thread (so that a database that cannot be opened throws here), then starts the engine thread.
    public init(options: ServerOptions, logger: Logger = Logger(label: "chatfeed.engine")) throws {
        let (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        self.lines = lines
        let output = LineOutput(continuation)
        let engine = try Engine(options: options, logger: logger, input: nil, output: output, queue: queue, shutdown: shutdown)
        let stopped = self.stopped
        let thread = Thread {
            engine.run()
            stopped.set()
            continuation.finish()
        }
        thread.name = "chatfeed.engine"
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Hands request bytes (whole lines, each ending in `\n`) to the engine. Waits while the
    /// engine's input queue is full (256 KiB); returns false once the engine has stopped.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        queue.push(.bytes(bytes))
    }

    /// Ends the input: the engine answers what it has, commits and stops; `lines` then finishes.
    public func close() {
        queue.push(.endOfInput)
    }

    /// True once the engine thread has ended.
    public var isStopped: Bool { stopped.isSet }
}

/// Splits the engine's output into lines for an `AsyncStream`.
final class LineOutput: EngineOutput, @unchecked Sendable {
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private var pending: [UInt8] = []
    private let gone = Flag()

    init(_ continuation: AsyncStream<[UInt8]>.Continuation) {
        self.continuation = continuation
        continuation.onTermination = { [gone] termination in
            if case .cancelled = termination { gone.set() }
        }
    }

    func enqueue(_ bytes: [UInt8]) {
        pending.append(contentsOf: bytes)
    }

    @discardableResult
    func flush() -> Bool {
        var start = 0
        while let newline = pending[start...].firstIndex(of: 0x0A) {
            continuation.yield(Array(pending[start..<newline]))
            start = newline + 1
        }
        pending.removeFirst(start)
        return !isPeerGone
    }

    var isPeerGone: Bool { gone.isSet }
}

/// A flag set once, from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
