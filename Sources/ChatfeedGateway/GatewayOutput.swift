import ChatfeedEngine
import NIOCore
import Synchronization

/// A gateway session's output: the engine's lines, handed from the engine thread to the
/// connection's event loop, where `GatewayWebSocketHandler` writes each line as a text frame
/// while the socket takes them (docs/GATEWAY.md, Flow control).
///
/// No task waits on it: the engine thread appends each flush's lines as one buffer and, when the
/// event loop is not already due to look, schedules one look on it (`wake`); the event loop takes
/// the buffers and writes their lines as frames while the channel is writable, then tells how
/// many bytes it wrote (`written`). Lines taken by neither the socket nor the channel's own
/// buffer (bounded by its write watermarks) are *unread*: past `limitBytes` of them the engine
/// holds the session's requests (`isBackedUp`) until the writes catch up and call `drained`.
///
/// Every callback is called after the lock is released (see `LineOutput`: resuming a waiter under
/// a lock deadlocked the engine against a connection once).
final class GatewayOutput: EngineOutput, @unchecked Sendable {
    let limitBytes: Int
    /// Queued by the engine thread, not yet flushed (engine thread only); nil when empty, so that
    /// an idle session keeps no buffer.
    private var pending: ByteBuffer?

    private struct State {
        /// Flushed lines not yet taken by the event loop: one buffer of whole lines per flush.
        var chunks: [ByteBuffer] = []
        /// Bytes flushed and not yet written to the channel (taken or not).
        var unreadBytes = 0
        /// A look of the event loop is scheduled and has not taken the chunks yet.
        var wakeScheduled = false
        /// The engine ended the session: no line follows the chunks.
        var finished = false
        /// The connection closed: lines are dropped.
        var gone = false
        /// Schedules a look of the event loop; nil once gone.
        var wake: (@Sendable () -> Void)?
        /// The engine's drain callback (`notifyWhenDrained`).
        var drained: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    /// - Parameter limitBytes: the session's bound on unread output (`sessionOutputLimitBytes`).
    init(limitBytes: Int) {
        self.limitBytes = limitBytes
    }

    // MARK: The event loop's side

    /// Sets what schedules the event loop's look at new lines (before the session opens).
    func attach(wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    /// Takes the lines flushed since the last take, and whether the session ended after them.
    func take() -> (chunks: [ByteBuffer], finished: Bool) {
        state.withLock { state in
            state.wakeScheduled = false
            defer { state.chunks = [] }
            return (state.chunks, state.finished)
        }
    }

    /// `bytes` of taken lines (each with its newline) were written to the channel.
    func written(_ bytes: Int) {
        let drained = state.withLock { state -> (@Sendable () -> Void)? in
            state.unreadBytes -= bytes
            guard state.unreadBytes <= limitBytes, let drained = state.drained else { return nil }
            state.drained = nil
            return drained
        }
        drained?()
    }

    /// The connection closed: what is unread is dropped, the engine sees its reader gone (and
    /// a held session is let go).
    func detach() {
        let drained = state.withLock { state -> (@Sendable () -> Void)? in
            state.gone = true
            state.chunks = []
            state.unreadBytes = 0
            state.wake = nil
            defer { state.drained = nil }
            return state.drained
        }
        drained?()
    }

    // MARK: EngineOutput (the engine thread)

    func enqueue(_ bytes: [UInt8]) {
        if pending == nil {
            pending = ByteBufferAllocator().buffer(capacity: bytes.count)
        }
        pending!.writeBytes(bytes)
    }

    @discardableResult
    func flush() -> Bool {
        guard var chunk = pending else { return !isPeerGone }
        // Whole lines only: a line split across `enqueue` calls waits for its end.
        var rest: ByteBuffer?
        if chunk.readableBytesView.last != 0x0A {
            guard let lastNewline = chunk.readableBytesView.lastIndex(of: 0x0A) else { return !isPeerGone }
            let end = lastNewline + 1 - chunk.readerIndex
            rest = chunk.getSlice(at: chunk.readerIndex + end, length: chunk.readableBytes - end)
            chunk = chunk.getSlice(at: chunk.readerIndex, length: end)!
        }
        // The rest of a split line (rare) is copied out of the flushed buffer's storage.
        pending = rest.map { rest in
            var copy = ByteBufferAllocator().buffer(capacity: rest.readableBytes)
            copy.writeImmutableBuffer(rest)
            return copy
        }
        let (wake, gone) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
            guard !state.gone else { return (nil, true) }
            state.chunks.append(chunk)
            state.unreadBytes += chunk.readableBytes
            guard !state.wakeScheduled else { return (nil, false) }
            state.wakeScheduled = true
            return (state.wake, false)
        }
        wake?()
        return !gone
    }

    var isPeerGone: Bool { state.withLock { $0.gone } }

    var isBackedUp: Bool {
        state.withLock { $0.unreadBytes } + (pending?.readableBytes ?? 0) > limitBytes
    }

    func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool {
        flush()  // the event loop can drain only what was delivered
        return state.withLock { state in
            guard state.unreadBytes > limitBytes, !state.gone else { return false }
            state.drained = drained
            return true
        }
    }

    func finish() {
        flush()
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            state.finished = true
            guard !state.wakeScheduled else { return nil }
            state.wakeScheduled = true
            return state.wake
        }
        wake?()
    }
}
