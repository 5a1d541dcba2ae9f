import Foundation
import Synchronization

/// What sessions and the database watcher hand to the engine thread.
enum Input {
    /// A session starts: the engine records it before any of its input.
    case opened(SessionRecord)
    /// A piece of a session's bytes, framed and decoded by its sender (`EngineSession`).
    case input(session: Int, SessionInput)
    /// The session's input ended (its reader hit end of file, or it was closed).
    case endOfInput(session: Int)
    /// Another process may have committed (the database's files were written).
    case databaseChanged
    /// Work for the engine thread between requests (a look at the store for a gateway).
    case call(@Sendable (Engine) -> Void)
}

/// A bounded queue from the sessions' threads to the engine thread, per session: a session's
/// sender blocks while more than `capacityBytes` of its input wait, so a client that writes faster
/// than the engine commits is slowed down instead of growing memory, and an ack never waits behind
/// more than that much input. A session whose output is backed up is *held*: its input stays
/// queued (and its sender blocks) until its reader catches up, while other sessions go on.
final class InputQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Input] = []
    private var queuedBytes: [Int: Int] = [:]
    private var held: Set<Int> = []
    /// Sessions opened and not ended: only their senders are accepted. An ended session keeps
    /// nothing here (ids are never reused, so an id not in it is one that ended or never opened).
    private var open: Set<Int> = []
    private var databaseChangePending = false
    /// A session was released or a wake asked for since the last take: the next take does not wait.
    private var wakePending = false
    private var stopped = false
    private let capacityBytes: Int
    /// Suspended senders (`pushSuspending`), by session, resumed when their queue has room again,
    /// their session ends or the engine stops.
    private var roomWaiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    /// Senders that did not wait (`tryPush`), by session: called once, after the lock is
    /// released, when their queue has room again, their session ends or the engine stops.
    private var roomCallbacks: [Int: [@Sendable () -> Void]] = [:]

    init(capacityBytes: Int = 256 << 10) {
        self.capacityBytes = capacityBytes
    }

    /// The most bytes a session's sender frames and queues as one item: a larger send is
    /// queued in pieces, each waiting for room, so that another session's request (an ack) waits
    /// behind at most about `capacityBytes` of it, however much a client hands over at once. (A
    /// line may span pieces: the session's framer joins them.)
    static let pieceBytes = 64 << 10

    /// `bytes` in pieces of at most `pieceBytes`.
    static func pieces(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        stride(from: 0, to: bytes.count, by: pieceBytes).map { bytes[$0..<min($0 + pieceBytes, bytes.count)] }
    }

    /// Adds input; waits while the session's queue is full (unless `waitingForRoom` is false: a
    /// closing session's last line). Returns false once the engine has stopped or the session has
    /// ended (a session's input is accepted from its `.opened` on).
    @discardableResult
    func push(_ input: Input, waitingForRoom: Bool = true) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        switch input {
        case .input(let session, let input):
            while waitingForRoom && queuedBytes[session, default: 0] > capacityBytes && !stopped && open.contains(session) {
                condition.wait()
            }
            if stopped || !open.contains(session) { return false }
            queuedBytes[session, default: 0] += input.byteCount
        case .endOfInput(let session):
            if stopped || !open.contains(session) { return false }
        case .databaseChanged:
            if stopped { return false }
            if databaseChangePending { return true }
            databaseChangePending = true
        case .call:
            if stopped { return false }
        case .opened(let record):
            if stopped { return false }
            open.insert(record.id)
        }
        items.append(input)
        condition.broadcast()
        return true
    }

    /// Adds a session's bytes like `push`, but suspends the calling task instead of blocking its
    /// thread while the session's queue is full (or held), so that an event loop or a task of the
    /// cooperative pool can feed a session. Returns false once the engine has stopped or the
    /// session has ended.
    func pushSuspending(session: Int, _ input: SessionInput) async -> Bool {
        while true {
            let outcome: Bool? = {
                condition.lock()
                defer { condition.unlock() }
                if stopped || !open.contains(session) { return false }
                if queuedBytes[session, default: 0] > capacityBytes { return nil }
                queuedBytes[session, default: 0] += input.byteCount
                items.append(.input(session: session, input))
                condition.broadcast()
                return true
            }()
            if let outcome { return outcome }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                condition.lock()
                defer { condition.unlock() }
                if stopped || !open.contains(session) || queuedBytes[session, default: 0] <= capacityBytes {
                    waiter.resume()
                } else {
                    roomWaiters[session, default: []].append(waiter)
                }
            }
        }
    }

    /// The outcome of `tryPush`.
    enum TryPushOutcome: Sendable {
        /// Queued.
        case pushed
        /// Not queued: the session's queue is full. The callback given is called once when it has
        /// room again (or the session ends, or the engine stops).
        case full
        /// Not queued: the engine has stopped or the session has ended.
        case ended
    }

    /// Adds a session's input without waiting, for an event loop that feeds a session: when the
    /// session's queue is full (more than `capacityBytes` wait, held or not) nothing is queued and
    /// `whenRoom` is called once, on whatever thread makes the room (never under this queue's
    /// lock), when the input may be offered again.
    func tryPush(session: Int, _ input: SessionInput, whenRoom: @escaping @Sendable () -> Void) -> TryPushOutcome {
        condition.lock()
        defer { condition.unlock() }
        if stopped || !open.contains(session) { return .ended }
        if queuedBytes[session, default: 0] > capacityBytes {
            roomCallbacks[session, default: []].append(whenRoom)
            return .full
        }
        queuedBytes[session, default: 0] += input.byteCount
        items.append(.input(session: session, input))
        condition.broadcast()
        return .pushed
    }

    /// Resumes the suspended senders of sessions whose queue has room, or that ended (lock held),
    /// and returns the callbacks of the senders that did not wait, for the caller to call once it
    /// has released the lock.
    private func resumeRoomWaiters() -> [@Sendable () -> Void] {
        var callbacks: [@Sendable () -> Void] = []
        for (session, waiting) in roomCallbacks
        where stopped || !open.contains(session) || queuedBytes[session, default: 0] <= capacityBytes {
            roomCallbacks[session] = nil
            callbacks.append(contentsOf: waiting)
        }
        guard !roomWaiters.isEmpty else { return callbacks }
        for (session, waiters) in roomWaiters
        where stopped || !open.contains(session) || queuedBytes[session, default: 0] <= capacityBytes {
            roomWaiters[session] = nil
            for waiter in waiters { waiter.resume() }
        }
        return callbacks
    }

    /// Everything queued for sessions that are not held, in arrival order, waiting up to
    /// `timeout` seconds for something to arrive. After `stop()` it takes everything, held or not.
    func takeAll(waitingAtMost timeout: TimeInterval) -> [Input] {
        condition.lock()
        var callbacks: [@Sendable () -> Void] = []
        defer {
            condition.unlock()
            for callback in callbacks { callback() }
        }
        if !stopped && !wakePending && !items.contains(where: isTakeable) {
            _ = condition.wait(until: Date(timeIntervalSinceNow: timeout))
        }
        wakePending = false
        var taken: [Input] = []
        var kept: [Input] = []
        for item in items {
            if stopped || isTakeable(item) {
                if case .input(let session, let input) = item { queuedBytes[session, default: 0] -= input.byteCount }
                taken.append(item)
            } else {
                kept.append(item)
            }
        }
        items = kept
        databaseChangePending = false
        condition.broadcast()
        callbacks = resumeRoomWaiters()
        return taken
    }

    /// True when `takeAll` would return at once: something takeable is queued, or a wake is.
    var hasInput: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped || wakePending || items.contains(where: isTakeable)
    }

    private func isTakeable(_ input: Input) -> Bool {
        switch input {
        case .input(let session, _), .endOfInput(let session): !held.contains(session)
        case .opened, .databaseChanged, .call: true
        }
    }

    /// Keeps the session's input queued until `release`.
    func hold(_ session: Int) {
        condition.lock()
        held.insert(session)
        condition.unlock()
    }

    /// Lets the session's input through again, and wakes the engine.
    func release(_ session: Int) {
        condition.lock()
        held.remove(session)
        wakePending = true
        condition.broadcast()
        condition.unlock()
    }

    /// Refuses the session's further input and releases its blocked sender; what it already queued
    /// stays, followed by an end of its input.
    func end(_ session: Int) {
        condition.lock()
        if open.remove(session) != nil {
            held.remove(session)
            queuedBytes[session] = nil
            items.append(.endOfInput(session: session))
        }
        condition.broadcast()
        let callbacks = resumeRoomWaiters()
        condition.unlock()
        for callback in callbacks { callback() }
    }

    /// Forgets an ended session whose end the engine handled.
    func forget(_ session: Int) {
        condition.lock()
        queuedBytes[session] = nil
        held.remove(session)
        condition.unlock()
    }

    /// The sessions the queue keeps anything of (their ids in its sets and counts): the open
    /// ones only, once the engine handled the others' end (`forget`).
    var keptSessions: Set<Int> {
        condition.lock()
        defer { condition.unlock() }
        return open.union(held).union(queuedBytes.keys)
    }

    /// Wakes the engine without input (for a stop request).
    func wake() {
        condition.lock()
        wakePending = true
        condition.broadcast()
        condition.unlock()
    }

    /// Refuses further input and releases blocked senders.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        let callbacks = resumeRoomWaiters()
        condition.unlock()
        for callback in callbacks { callback() }
    }
}

/// A stop request, set from any thread (a signal handler's task, `ChatEngine.stop()`) and read by
/// the engine.
final class ShutdownRequest: Sendable {
    private let time = Mutex<Date?>(nil)

    /// When the stop was first requested, nil until then.
    var requestedAt: Date? { time.withLock { $0 } }

    var isRequested: Bool { requestedAt != nil }

    func request() {
        time.withLock { if $0 == nil { $0 = Date() } }
    }
}
