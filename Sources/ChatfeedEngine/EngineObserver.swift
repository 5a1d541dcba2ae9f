import Synchronization

/// Watches the engine's work for metrics (a gateway's `/metrics`), without the engine knowing
/// any metrics library. Called on the engine thread: return at once.
public protocol EngineObserver: AnyObject, Sendable {
    /// A group commit ended: `writes` events applied in one transaction that took `duration`,
    /// its sync included (called once the group is durable, before its writes are answered).
    func groupCommitted(writes: Int, duration: Duration)
    /// The feed work kept from a group (its changes applied to the live lists, the batches they
    /// and the acks before them released, written to the sessions) ran on a thread of its own
    /// beside the next group's statements and took `duration` (called once both have ended).
    func feedWorkRanBeside(duration: Duration)
}

extension EngineObserver {
    public func feedWorkRanBeside(duration: Duration) {}
}

/// The engine's observer, set from any thread, read on the engine thread.
final class ObserverSlot: Sendable {
    private let observer = Mutex<(any EngineObserver)?>(nil)
    var current: (any EngineObserver)? { observer.withLock { $0 } }
    func set(_ new: (any EngineObserver)?) { observer.withLock { $0 = new } }
}
