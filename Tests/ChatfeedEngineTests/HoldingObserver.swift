import ChatfeedEngine
import Foundation
import Synchronization
import TestSupport

/// Counts group commits, and holds the engine thread in the first one after `hold()` until
/// `release()`.
final class HoldingObserver: EngineObserver, @unchecked Sendable {
    private let state = Mutex<(armed: Bool, groups: [Int])>((false, []))
    private let holding = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    var groups: [Int] { state.withLock { $0.groups } }

    func hold() { state.withLock { $0.armed = true } }
    func release() { released.signal() }

    func waitUntilHolding() async {
        await offPool { [holding] in holding.wait() }
    }

    func groupCommitted(writes: Int, duration: Duration) {
        let armed = state.withLock { state in
            defer { state.armed = false }
            if state.armed { state.groups = [] }
            state.groups.append(writes)
            return state.armed
        }
        if armed {
            holding.signal()
            released.wait()
        }
    }
}
