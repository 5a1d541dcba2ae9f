import ChatfeedEngine
import Foundation

/// A session output whose backing-up the test decides, as a reader that reads only when told:
/// it counts the lines delivered and keeps the drain callbacks the engine registers.
final class ControlledOutput: EngineOutput, @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var delivered = 0
    private var backedUp = false
    private var finished = false
    private var drained: (@Sendable () -> Void)?
    private var registered = 0

    func enqueue(_ bytes: [UInt8]) {
        lock.withLock { pending += bytes }
    }

    func flush() -> Bool {
        lock.withLock {
            delivered += pending.count { $0 == 0x0A }
            deliveredBytes += pending
            pending.removeAll()
        }
        return true
    }

    private var deliveredBytes: [UInt8] = []

    /// The lines delivered so far, in order.
    var deliveredText: [String] {
        lock.withLock { String(decoding: deliveredBytes, as: UTF8.self).split(separator: "\n").map(String.init) }
    }

    var isPeerGone: Bool { false }

    var isBackedUp: Bool { lock.withLock { backedUp } }

    func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool {
        flush()
        return lock.withLock {
            guard backedUp else { return false }
            self.drained = drained
            registered += 1
            return true
        }
    }

    func finish() {
        flush()
        lock.withLock { finished = true }
    }

    /// Sets whether the reader is behind.
    func setBackedUp(_ value: Bool) {
        lock.withLock { backedUp = value }
    }

    /// Calls the registered drain callback, as a reader that caught up would.
    func drain() {
        let drained = lock.withLock {
            defer { self.drained = nil }
            return self.drained
        }
        drained?()
    }

    /// How many drain callbacks the engine registered so far.
    var registrations: Int { lock.withLock { registered } }

    /// Lines delivered so far.
    var deliveredLines: Int { lock.withLock { delivered } }

    /// Waits (blocking) until `count` lines have been delivered, at most `seconds`.
    func waitForLines(_ count: Int, seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while deliveredLines < count, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        return deliveredLines >= count
    }

    var isFinished: Bool { lock.withLock { finished } }
}
