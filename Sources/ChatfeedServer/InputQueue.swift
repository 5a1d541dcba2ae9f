import Foundation
import Synchronization

/// What the stdin and watcher threads hand to the engine.
enum Input {
    case bytes([UInt8])
    case endOfInput
    /// Another process may have committed (the database's files were written).
    case databaseChanged
}

/// A bounded queue from the stdin thread to the engine thread. The reader blocks while more than
/// `capacityBytes` wait, so a client that writes faster than the engine commits is slowed down
/// instead of growing memory, and an ack never waits behind more than that much input.
final class InputQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Input] = []
    private var queuedBytes = 0
    private var databaseChangePending = false
    private var stopped = false
    private let capacityBytes: Int

    init(capacityBytes: Int = 256 << 10) {
        self.capacityBytes = capacityBytes
    }

    /// Adds input; waits while the queue is full. Returns false once the engine has stopped.
    @discardableResult
    func push(_ input: Input) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queuedBytes > capacityBytes && !stopped { condition.wait() }
        if stopped { return false }
        switch input {
        case .bytes(let bytes): queuedBytes += bytes.count
        case .databaseChanged: if databaseChangePending { return true } else { databaseChangePending = true }
        case .endOfInput: break
        }
        items.append(input)
        condition.broadcast()
        return true
    }

    /// Everything queued, waiting up to `timeout` seconds for something to arrive.
    func takeAll(waitingAtMost timeout: TimeInterval) -> [Input] {
        condition.lock()
        defer { condition.unlock() }
        if items.isEmpty && !stopped {
            _ = condition.wait(until: Date(timeIntervalSinceNow: timeout))
        }
        let taken = items
        items.removeAll(keepingCapacity: true)
        queuedBytes = 0
        databaseChangePending = false
        condition.broadcast()
        return taken
    }

    /// Wakes the engine without input (for a shutdown request).
    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Refuses further input and releases a blocked reader.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A shutdown request, set from any thread (a signal handler's task) and read by the engine.
final class ShutdownRequest: Sendable {
    private let time = Mutex<Date?>(nil)

    /// When the shutdown was first requested, nil until then.
    var requestedAt: Date? { time.withLock { $0 } }

    var isRequested: Bool { requestedAt != nil }

    func request() {
        time.withLock { if $0 == nil { $0 = Date() } }
    }
}
