import ChatfeedClient
import Foundation
import Synchronization
import Testing

/// The waits of a `ReconnectPolicy`, and a client that makes its transport's attempts, no more.
@Suite struct ReconnectPolicyTests {
    @Test(arguments: [ReconnectPolicy.local, .network])
    func eachWaitIsWithinItsBoundsAndOnlyTheFirstIsWhollyRandom(policy: ReconnectPolicy) {
        for attempt in 0..<(policy.delays.count + 2) {
            let longest = policy.delays[min(attempt, policy.delays.count - 1)]
            let shortest = attempt == 0 ? Duration.zero : longest * (1 - policy.jitter)
            for random in [0, 0.1, 0.5, 0.9, 0.999_999] {
                let wait = policy.delay(beforeAttempt: attempt, random: random)
                #expect(wait <= longest && wait >= shortest * 0.999_999, "attempt \(attempt), random \(random): \(wait)")
            }
            #expect(policy.delay(beforeAttempt: attempt, random: 0) == longest)
        }
    }

    @Test func theDefaultsKeepALocalEngineQuickAndWaitAboutAMinuteForAGateway() {
        #expect(ReconnectPolicy.local.delays.reduce(.zero, +) == .milliseconds(3750))
        #expect(ReconnectPolicy.local.delay(beforeAttempt: 4, random: 0.7) == .seconds(1))
        let network = ReconnectPolicy.network.delays.reduce(Duration.zero, +)
        #expect(network >= .seconds(55) && network <= .seconds(70))
        // The clients of a restarted gateway spread over the first second.
        #expect(ReconnectPolicy.network.delay(beforeAttempt: 0, random: 0.25) == .milliseconds(750))
        #expect(WebSocketTransport(url: "ws://127.0.0.1:1/v1/feed", token: "t").reconnectPolicy == .network)
    }

    @Test(arguments: [2, 3])
    func theClientMakesThePolicysAttemptsThenGivesUp(refusals: Int) async throws {
        let policy = ReconnectPolicy(delays: [.zero, .milliseconds(10), .milliseconds(10)], jitter: 0.5)
        let transport = RefusingTransport(policy: policy, refusals: refusals)
        let client = try await ChatClient(transport: transport, requestTimeout: .seconds(10))
        try #require(transport.opened.first).end()
        if refusals < policy.delays.count {
            // The attempt after the refusals opens the next connection.
            for _ in 0..<500 where transport.opened.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(transport.opened.count == 2)
            #expect(transport.attempts == refusals + 1)
        } else {
            // Every attempt refused: nothing more is tried, and calls throw `reconnectFailed`.
            for _ in 0..<500 where transport.attempts < policy.delays.count { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(transport.attempts == policy.delays.count)
            await #expect {
                _ = try await client.listChats(limit: 1)
            } throws: { error in
                if case ChatfeedClientError.reconnectFailed = error { true } else { false }
            }
            #expect(transport.opened.count == 1)
        }
        await client.close()
    }
}

/// A transport whose first connect opens, whose next `refusals` connects throw, and whose later
/// connects open again.
private final class RefusingTransport: ChatfeedTransport {
    let reconnectPolicy: ReconnectPolicy
    private let refusals: Int
    private let state = Mutex<(attempts: Int, opened: [ScriptedConnection])>((0, []))

    init(policy: ReconnectPolicy, refusals: Int) {
        reconnectPolicy = policy
        self.refusals = refusals
    }

    /// Connects after the first.
    var attempts: Int { state.withLock { max($0.attempts - 1, 0) } }
    var opened: [ScriptedConnection] { state.withLock { $0.opened } }

    func connect() async throws -> any ChatfeedConnection {
        try state.withLock { state in
            state.attempts += 1
            if state.attempts > 1, state.attempts <= 1 + refusals { throw ScriptError("refused (\(state.attempts - 1))") }
            let connection = ScriptedConnection()
            state.opened.append(connection)
            return connection
        }
    }
}
