/// How long a `ChatClient` waits before each attempt to reopen a connection that ended on its own,
/// and how many attempts it makes before it gives up (its subscriptions then end with
/// `FeedError.resubscribeFailed`). A transport says which policy suits it
/// (`ChatfeedTransport.reconnectPolicy`).
///
/// Attempt `i` waits `delays[i]` less a random part of up to `jitter` of it; the first attempt's
/// wait is wholly random (0 to `delays[0]`), so that the clients of a restarted gateway do not
/// all come back at the same instant. A connection that ended again without answering anything
/// adds 100 ms per such end in a row.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The longest wait before each attempt, in order; their count is the number of attempts.
    public var delays: [Duration]
    /// The part of each wait after the first that is random (0: none, 1: all of it).
    public var jitter: Double

    public init(delays: [Duration], jitter: Double) {
        precondition(!delays.isEmpty, "a reconnect policy makes at least one attempt")
        precondition((0...1).contains(jitter), "jitter is a fraction, from 0 to 1")
        self.delays = delays
        self.jitter = jitter
    }

    /// An engine on this machine (a `chatfeedd` child, the in-process engine): it is back at once
    /// or not at all. Six attempts within about 4 s, without jitter (one client, one engine).
    public static let local = ReconnectPolicy(
        delays: [.zero, .milliseconds(50), .milliseconds(200), .milliseconds(500), .seconds(1), .seconds(2)], jitter: 0)

    /// A gateway across a network, which a deploy restarts (1012) or a crash takes down for a few
    /// seconds: the first attempt within 1 s (spread at random), then waits of 1, 2, 4 and 8 s
    /// (each up to half random), 8 s after that: eleven attempts over about a minute.
    public static let network = ReconnectPolicy(
        delays: [.seconds(1), .seconds(1), .seconds(2), .seconds(4)] + Array(repeating: .seconds(8), count: 7), jitter: 0.5)

    /// The wait before attempt `attempt` (from 0), `random` in 0..<1.
    public func delay(beforeAttempt attempt: Int, random: Double) -> Duration {
        let longest = delays[min(attempt, delays.count - 1)]
        let randomPart = attempt == 0 ? 1 : jitter
        return longest * (1 - randomPart * random)
    }
}
