import ChatfeedEngine
import Foundation
import NamedThreads
import Synchronization

/// The daemon's stdout as the engine sees it: the engine hands whole lines to a writer thread and
/// never waits for the reader. A reader that stops reading holds its own session only — past
/// `limitBytes` unwritten, the engine stops reading that session's requests, as for any session
/// (`EngineOutput.isBackedUp`) — while the engine serves every other session (a gateway's).
///
/// The writer thread writes through `OutputWriter`: whole lines, and the shutdown grace.
final class ThreadedOutput: EngineOutput, @unchecked Sendable {
    private let writer: OutputWriter
    private let limitBytes: Int
    /// Queued by the engine since its last flush (engine thread only).
    private var staged: [UInt8] = []
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let written = DispatchSemaphore(value: 0)

    private struct State {
        /// Handed over by the engine, not yet taken by the writer thread.
        var queued: [[UInt8]] = []
        /// Bytes handed over and not yet written.
        var unwritten = 0
        var isClosed = false
        var isFinished = false
        var drained: (@Sendable () -> Void)?
    }

    /// Starts the writer thread of `writer`.
    init(_ writer: OutputWriter, limitBytes: Int) {
        self.writer = writer
        self.limitBytes = limitBytes
        Thread.start(named: "chatfeedd.out") { [self] in writeUntilFinished() }
    }

    func enqueue(_ bytes: [UInt8]) {
        staged.append(contentsOf: bytes)
    }

    @discardableResult
    func flush() -> Bool {
        guard !staged.isEmpty else { return !state.withLock { $0.isClosed } }
        let bytes = staged
        staged = []
        let isClosed = state.withLock { state in
            if !state.isClosed {
                state.queued.append(bytes)
                state.unwritten += bytes.count
            }
            return state.isClosed
        }
        wake.signal()
        return !isClosed
    }

    /// `OutputWriter.isPeerGone` only polls the descriptor: safe beside the writer thread.
    var isPeerGone: Bool { state.withLock { $0.isClosed } || writer.isPeerGone }

    var isBackedUp: Bool { state.withLock { $0.unwritten } + staged.count > limitBytes }

    func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool {
        flush()
        return state.withLock { state in
            guard !state.isClosed, state.unwritten > limitBytes else { return false }
            state.drained = drained
            return true
        }
    }

    /// Hands over what is staged; the writer thread writes it and ends. `waitUntilWritten()` waits.
    func finish() {
        flush()
        state.withLock { $0.isFinished = true }
        wake.signal()
    }

    /// Blocks until the writer thread has written everything (or found the reader gone, or given
    /// up after the shutdown grace) after `finish()`.
    func waitUntilWritten() {
        written.wait()
        written.signal()
    }

    private func writeUntilFinished() {
        while true {
            wake.wait()
            let (chunks, isFinished) = state.withLock { state in
                defer { state.queued.removeAll() }
                return (state.queued, state.isFinished)
            }
            var bytes = 0
            for chunk in chunks {
                writer.enqueue(chunk)
                bytes += chunk.count
            }
            let isOpen = chunks.isEmpty ? !writer.isClosed : writer.flush()
            let (drained, isDone) = state.withLock { state in
                state.unwritten -= bytes
                if !isOpen { state.isClosed = true }
                var drained: (@Sendable () -> Void)?
                if state.isClosed || state.unwritten <= limitBytes {
                    drained = state.drained
                    state.drained = nil
                }
                return (drained, isFinished && state.queued.isEmpty)
            }
            drained?()
            if isDone { break }
        }
        written.signal()
    }
}
