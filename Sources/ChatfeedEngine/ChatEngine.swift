import ChatModel
import ChatStore
import Foundation
import Logging
import NamedThreads
import Synchronization

/// The engine: the one serialization point that owns the store and the feed, serving any number
/// of sessions (docs/PROTOCOL.md, The live feed). Each session is a connection — the daemon's stdin/stdout, an in-process
/// client, a WebSocket — with JSON-RPC lines in and out (docs/PROTOCOL.md); the requests of all
/// sessions are handled on one thread, in one order, and each session's answers and feed
/// notifications go to that session's output only. A subscription belongs to its session and ends
/// with it.
///
/// Several in-process clients can share one engine (an app and its extension): open one session
/// each. `stop()` ends every session: pending writes commit, answers are delivered, the database
/// is closed.
public final class ChatEngine: Sendable {
    public let options: EngineOptions
    private let queue = InputQueue()
    private let shutdown = ShutdownRequest()
    private let stopped = DispatchSemaphore(value: 0)
    private let stoppedFlag = Flag()
    private let nextSession = Atomic<Int>(1)
    private let sessionsOpen = SessionCount()
    private let engine: Engine

    /// Opens (or creates) the database of `options` and loads the chat list on the caller's thread
    /// (so that a database that cannot be opened throws here), then starts the engine thread. The
    /// quick check (`quickCheckAtStart`) goes on beside it: writes wait for it.
    public init(options: EngineOptions, logger: Logger = Logger(label: "chatfeed.engine")) throws {
        self.options = options
        let engine = try Engine(options: options, logger: logger, queue: queue, shutdown: shutdown)
        self.engine = engine
        let (stopped, stoppedFlag) = (self.stopped, self.stoppedFlag)
        Thread.start(named: "chatfeed.engine", stackSize: 8 << 20) {
            engine.run()
            stoppedFlag.set()
            stopped.signal()
        }
    }

    /// Opens a session whose lines the engine writes to `output` (stdout, a socket): the engine
    /// calls `output` one call at a time (`EngineOutput`). `onEnd` is called once, on the engine
    /// thread, when the session ends (end of its input, its reader gone, or the engine stopping).
    public func openSession(
        identity: SessionIdentity = .trusted, output: any EngineOutput, onEnd: (@Sendable () -> Void)? = nil
    ) -> EngineSession {
        let id = nextSession.wrappingAdd(1, ordering: .relaxed).oldValue
        let counted = sessionsOpen
        counted.value.add(1, ordering: .relaxed)
        let ended: @Sendable () -> Void = {
            counted.value.subtract(1, ordering: .relaxed)
            onEnd?()
        }
        let record = SessionRecord(id: id, identity: identity, output: output, onEnd: ended)
        if !queue.push(.opened(record)) {
            output.finish()
            ended()
        }
        return EngineSession(
            id: id, identity: identity, queue: queue, maxLineBytes: options.maxLineBytes, defaultUser: options.defaultUser)
    }

    /// The sessions open now, of every kind (stdin, in-process, gateway connections): opened and
    /// not yet ended.
    public var openSessions: Int { sessionsOpen.value.load(ordering: .relaxed) }

    /// Opens an in-process session: its lines come as an async sequence, and while more than
    /// `options.sessionOutputLimitBytes` of them are unread the engine holds its requests.
    public func openInProcessSession(identity: SessionIdentity = .trusted) -> InProcessSession {
        let output = LineOutput(limitBytes: options.sessionOutputLimitBytes)
        let ended = Flag()
        let session = openSession(identity: identity, output: output, onEnd: { ended.set() })
        return InProcessSession(session: session, output: output, ended: ended)
    }

    /// The user `id` as the store has it now (after every write received before), nil when there is
    /// none: a gateway checks a token's subject with it before it opens the session. Suspends
    /// (it never blocks its thread) while the engine works through the input before it.
    /// - Throws: `EngineStoppedError` once the engine has stopped; a store error when it cannot read.
    public func user(_ id: String) async throws -> User? {
        try await withCheckedThrowingContinuation { (answer: CheckedContinuation<User?, any Error>) in
            let pushed = queue.push(.call { engine in answer.resume(with: Result { try engine.user(id: id) }) })
            if !pushed { answer.resume(throwing: EngineStoppedError()) }
        }
    }

    /// Ends every session and stops: the input already received is handled, pending writes
    /// commit, answers flush, the database closes. Returns at once; see `waitUntilStopped()`.
    public func stop() {
        shutdown.request()
        queue.wake()
    }

    /// Told of the engine's work (group commits), for metrics; nil: none.
    public var observer: (any EngineObserver)? {
        get { engine.observer.current }
        set { engine.observer.set(newValue) }
    }

    /// True once the engine thread has ended.
    public var isStopped: Bool { stoppedFlag.isSet }

    /// Why the engine refused writes for good — the database file was deleted or replaced under
    /// it, or the start-up's quick check found it damaged (`ChatStoreError.damaged`) — once it has
    /// stopped; nil while it runs and when nothing went wrong. The daemon exits with a failure
    /// status when this is set.
    public var lostDatabase: ChatStoreError? {
        isStopped ? engine.lostDatabase : nil
    }

    /// Blocks the calling thread until the engine has stopped (not for a task of the cooperative pool).
    public func waitUntilStopped() {
        stopped.wait()
        stopped.signal()
    }
}

/// One session's input: its request bytes go to the engine through `send`, tagged with it.
///
/// The sending thread frames and decodes the session's lines (each send's, before it hands them
/// over), so that the engine thread only handles them. A session's sends are made one at a time
/// (a line may span them), as a connection's bytes arrive.
public final class EngineSession: Sendable {
    /// Unique within its engine.
    public let id: Int
    public let identity: SessionIdentity
    private let queue: InputQueue
    /// Held only while a send frames its bytes, never while it waits for room.
    private let framer: Mutex<RequestFramer>

    init(
        id: Int, identity: SessionIdentity, queue: InputQueue, maxLineBytes: Int,
        defaultUser: String = EngineOptions.defaultDefaultUser
    ) {
        self.id = id
        self.identity = identity
        self.queue = queue
        self.framer = Mutex(RequestFramer(maxLineBytes: maxLineBytes, identity: identity, defaultUser: defaultUser))
    }

    /// Hands request bytes (whole lines, each ending in `\n`; a line may also span calls) to the
    /// engine. Waits while this session's queued input is full (256 KiB) or, its output backed up,
    /// held; returns false once the session has ended or the engine has stopped.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        framed(bytes).allSatisfy { queue.push(.input(session: id, $0)) }
    }

    /// `bytes` framed and decoded, in pieces of at most `InputQueue.pieceBytes` (each waits for
    /// room on its own).
    private func framed(_ bytes: [UInt8]) -> [SessionInput] {
        framer.withLock { framer in InputQueue.pieces(of: bytes).map { framer.feed($0) } }
    }

    /// `send(_:)` for a task or an event loop: while this session's queued input is full (256 KiB)
    /// or held, it suspends the calling task instead of blocking its thread, so that a gateway
    /// that awaits it stops reading the session's socket (TCP backpressure on the client) and no
    /// other session waits. Returns false once the session has ended or the engine has stopped.
    @discardableResult
    public func sendSuspending(_ bytes: [UInt8]) async -> Bool {
        for input in framed(bytes) {
            guard await queue.pushSuspending(session: id, input) else { return false }
        }
        return true
    }

    /// What `trySend(_:whenRoom:)` did with the bytes.
    public enum SendOutcome: Sendable {
        /// Handed to the engine.
        case sent
        /// Not taken: this session's queued input is full (or held). `whenRoom` will be called
        /// once; offer the bytes again then.
        case full
        /// Not taken: the session has ended or the engine has stopped.
        case ended
    }

    /// `send(_:)` for an event loop that must never wait: hands the bytes to the engine when this
    /// session's queued input has room (256 KiB), and otherwise takes nothing and calls `whenRoom`
    /// once (on the engine's thread or the one that ends the session, never under a lock), when
    /// it has room again, the session ends or the engine stops. A gateway stops reading the
    /// session's socket meanwhile (TCP backpressure on the client); no other session waits.
    public func trySend(_ bytes: [UInt8], whenRoom: @escaping @Sendable () -> Void) -> SendOutcome {
        framer.withLock { framer in
            let before = framer  // bytes not taken are offered again: their framing is undone
            switch queue.tryPush(session: id, framer.feed(bytes[...]), whenRoom: whenRoom) {
            case .pushed: return .sent
            case .full:
                framer = before
                return .full
            case .ended: return .ended
            }
        }
    }

    /// Ends the session's input: the engine answers what it has (a last line without its `\n`
    /// too), ends the session's subscriptions and finishes its output.
    public func close() {
        // While a send of another thread frames, a last line without its `\n` is dropped: a close
        // never waits for a send.
        if let last = framer.withLockIfAvailable({ $0.finish() }) ?? nil {
            queue.push(.input(session: id, last), waitingForRoom: false)
        }
        queue.end(id)
    }
}

/// An in-process session: requests in through `send`, the engine's response and notification
/// lines out through `lines`.
public final class InProcessSession: Sendable {
    public let session: EngineSession
    /// The engine's lines for this session, each without its `\n`, in order. Finishes when the
    /// session ends.
    public let lines: AsyncStream<[UInt8]>
    private let output: LineOutput
    private let ended: Flag

    init(session: EngineSession, output: LineOutput, ended: Flag) {
        self.session = session
        self.lines = output.lines
        self.output = output
        self.ended = ended
    }

    /// See `EngineSession.send(_:)`.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool { session.send(bytes) }

    /// See `EngineSession.sendSuspending(_:)`.
    @discardableResult
    public func sendSuspending(_ bytes: [UInt8]) async -> Bool { await session.sendSuspending(bytes) }

    /// Ends the session: what was sent is answered, then `lines` finishes.
    public func close() { session.close() }

    /// True once the engine has ended the session.
    public var isEnded: Bool { ended.isSet }

    /// Bytes of output lines the engine delivered and `lines` has not yielded yet.
    public var unreadOutputBytes: Int { output.unreadBytes }
}

/// What the engine thread knows of a session when it opens.
struct SessionRecord: @unchecked Sendable {
    var id: Int
    var identity: SessionIdentity
    var output: any EngineOutput
    var onEnd: (@Sendable () -> Void)?
}

/// A flag set once, from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// The number of open sessions, shared with each session's end.
private final class SessionCount: Sendable {
    let value = Atomic<Int>(0)
}
