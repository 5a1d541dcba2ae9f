import ChatfeedClient
import ChatfeedEngine
import Foundation
import Synchronization
import Testing
import TestSupport

/// `close()` while the client is opening a new connection after its engine ended: the
/// connection that opens after the close is closed, and nothing else is opened.
@Suite struct CloseDuringReconnectTests {
    @Test func aConnectionThatOpensAfterCloseIsClosed() async throws {
        let directory = try TemporaryDirectory()
        let transport = GatedTransport(base: InProcessTransport(database: directory.path("reconnect.sqlite")))
        let client = try await ChatClient(transport: transport)
        let first = try #require(transport.opened.first)
        // The engine ends under the client: it reconnects, and its connect waits at the gate.
        first.engine.close()
        for _ in 0..<1000 where transport.waiting == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(transport.waiting == 1)
        let closing = Task { await client.close() }
        try await Task.sleep(for: .milliseconds(200))  // close() runs while connect() waits
        transport.openGate()
        await closing.value
        for _ in 0..<1000 where transport.opened.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(transport.opened.count == 2)
        let second = try #require(transport.opened.last)
        // Closed by the time close() returned (waiting a moment for a slower close).
        for _ in 0..<200 where !second.engine.isStopped { try await Task.sleep(for: .milliseconds(10)) }
        #expect(second.engine.isStopped)
        #expect(transport.connects == 2)
    }
}

/// An in-process transport whose connects after the first wait until the test opens the gate.
private final class GatedTransport: ChatfeedTransport {
    let base: InProcessTransport
    private struct State {
        var connects = 0
        var waiting = 0
        var open = false
        var opened: [InProcessConnection] = []
    }
    private let state = Mutex(State())

    init(base: InProcessTransport) { self.base = base }

    var connects: Int { state.withLock { $0.connects } }
    var waiting: Int { state.withLock { $0.waiting } }
    var opened: [InProcessConnection] { state.withLock { $0.opened } }

    func openGate() { state.withLock { $0.open = true } }

    func connect() async throws -> any ChatfeedConnection {
        let gated = state.withLock { state in
            state.connects += 1
            if state.connects > 1 { state.waiting += 1 }
            return state.connects > 1
        }
        // Waits whatever happens to the calling task: a connect that is slow to start. Not with
        // `Task.sleep`, which returns at once in a cancelled task: the loop would never suspend
        // and would hold one of the cooperative pool's threads (the full test run stalled on it).
        while gated, !state.withLock({ $0.open }) {
            await withCheckedContinuation { (slept: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { slept.resume() }
            }
        }
        let connection = try #require(try await base.connect() as? InProcessConnection)
        state.withLock { $0.opened.append(connection) }
        return connection
    }
}
