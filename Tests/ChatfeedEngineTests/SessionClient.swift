import ChatfeedEngine
import Foundation
import JSONCodec
import Testing

/// A test's view of one in-process session: requests by method and params, each answer read
/// from the session's own lines, notifications kept in arrival order.
final class SessionClient: @unchecked Sendable {
    let session: InProcessSession
    private var iterator: AsyncStream<[UInt8]>.Iterator
    private var nextID = 1
    /// The notifications read so far, in order.
    private(set) var notifications: [JSONValue] = []

    init(_ session: InProcessSession) {
        self.session = session
        iterator = session.lines.makeAsyncIterator()
    }

    /// The request line of `method`.
    static func line(id: Int?, _ method: String, _ params: JSONObject = [:]) -> [UInt8] {
        var object: JSONObject = ["jsonrpc": "2.0", "method": .string(method), "params": .object(params)]
        if let id { object.append("id", .integer(id)) }
        return JSONValue.object(object).serialized() + [0x0A]
    }

    /// The line of a `feed.ack` sent as a notification (no `id`).
    static func ackLine(_ seq: Int, subscription: String = "s1") -> [UInt8] {
        line(id: nil, "feed.ack", ["subscription": .string(subscription), "seq": .integer(Int64(seq))])
    }

    /// Sends a request and returns its response (`result` or `error` inside).
    func call(_ method: String, _ params: JSONObject = [:]) async throws -> JSONValue {
        let id = nextID
        nextID += 1
        #expect(session.send(Self.line(id: id, method, params)))
        return try await response(to: id)
    }

    /// Sends the requests in one input (the engine takes them in one round: its writes wait
    /// there together, and commit in as few groups as they fill) and returns their responses,
    /// in order.
    func callAll(_ requests: [(method: String, params: JSONObject)]) async throws -> [JSONValue] {
        let first = nextID
        nextID += requests.count
        var bytes: [UInt8] = []
        for (offset, request) in requests.enumerated() {
            bytes += Self.line(id: first + offset, request.method, request.params)
        }
        #expect(session.send(bytes))
        var responses: [JSONValue] = []
        for id in first..<(first + requests.count) { responses.append(try await response(to: id)) }
        return responses
    }

    /// The result of a request that must succeed.
    func result(_ method: String, _ params: JSONObject = [:]) async throws -> JSONValue {
        let response = try await call(method, params)
        let result = try #require(response["result"], "\(method) failed: \(response)")
        return result
    }

    /// Reads lines until the response with `id`, keeping the notifications before it.
    func response(to id: Int) async throws -> JSONValue {
        while let line = try await nextLine() {
            let message = try JSONValue(parsing: line)
            if message["id"] == .integer(id) { return message }
            if message["id"] != nil { Issue.record("an answer of another request: \(message)") }
            notifications.append(message)
        }
        throw SessionEnded()
    }

    /// The next line, or nil when the session's output finished; fails after 10 seconds.
    func nextLine() async throws -> [UInt8]? {
        try await withTimeout { [self] in await iterator.next() }
    }

    /// Waits for the next notification.
    func nextNotification() async throws -> JSONValue {
        let line = try #require(try await nextLine())
        let message = try JSONValue(parsing: line)
        notifications.append(message)
        return message
    }

    private func withTimeout<T: Sendable>(_ body: @escaping @Sendable () async -> T) async throws -> T {
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw TimedOut() }
            return value
        }
    }
}

struct SessionEnded: Error {}
struct TimedOut: Error {}
