import Foundation
import Synchronization

/// Hands an in-process connection's lines to the engine in order, on a serial queue of its own:
/// the engine's `send` waits while the session's input queue is full or the session is held (its
/// output unread past the bound), and what releases it is the client reading its lines — which
/// needs the client's actor. So the actor only queues a line here and never waits for the engine.
///
/// The lines wait here, in order, instead of in the caller: as many as the calls in flight, and
/// one ack per update read.
final class InProcessSender: Sendable {
    private let queue = DispatchQueue(label: "chatfeed.client.in-process-send")
    /// Set once the engine refused a line (the session ended) or the connection was closed.
    private let refused = Mutex(false)
    private let push: @Sendable ([UInt8]) -> Bool

    /// `push` hands a line to the engine, waiting as it must; false once the session has ended.
    init(push: @escaping @Sendable ([UInt8]) -> Bool) {
        self.push = push
    }

    /// Queues `line` after the lines before it; false when the session is known to have ended.
    func send(_ line: [UInt8]) -> Bool {
        guard !refused.withLock({ $0 }) else { return false }
        queue.async { [self] in
            guard !refused.withLock({ $0 }) else { return }
            if !push(line) { refused.withLock { $0 = true } }
        }
        return true
    }

    /// Runs `close` after every line queued before it; later lines are refused.
    func close(_ close: @escaping @Sendable () -> Void) {
        refused.withLock { $0 = true }
        queue.async(execute: close)
    }
}
