import ChatfeedClient
import Foundation
import JSONCodec
import Synchronization
import WireProtocol

/// A transport whose engine is the test: it reads what the client sent and writes the lines the
/// client receives.
final class ScriptedTransport: ChatfeedTransport {
    let connections = Mutex<[ScriptedConnection]>([])

    func connect() async throws -> any ChatfeedConnection {
        let connection = ScriptedConnection()
        connections.withLock { $0.append(connection) }
        return connection
    }

    /// The connection opened `number`-th (from 0), waiting up to 5 s for it.
    func connection(_ number: Int) async throws -> ScriptedConnection {
        for _ in 0..<500 {
            if let connection = connections.withLock({ $0.count > number ? $0[number] : nil }) { return connection }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ScriptError("no connection \(number)")
    }
}

struct ScriptError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

final class ScriptedConnection: ChatfeedConnection {
    let lines: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let sent = Mutex<[JSONValue]>([])
    private let taken = Mutex(0)

    init() {
        (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
    }

    var endReason: String? { "the script ended it" }

    func send(_ line: [UInt8]) throws {
        if severed.withLock({ $0 }) { throw ChatfeedClientError.connectionLost("the script closed its input") }
        let value = try JSONValue(parsing: Array(line.dropLast()))
        sent.withLock { $0.append(value) }
    }

    /// Refuses every later send as a lost connection, its lines still open: as a killed child,
    /// whose stdin the client finds closed before its reader sees stdout end.
    func sever() { severed.withLock { $0 = true } }
    private let severed = Mutex(false)

    func close() async {
        closed.withLock { $0 = true }
        continuation.finish()
    }

    /// True once the client closed the connection (`close()`).
    var wasClosed: Bool { closed.withLock { $0 } }
    private let closed = Mutex(false)

    /// Writes a line to the client.
    func push(_ line: String) { continuation.yield(Array(line.utf8)) }

    /// Ends the connection as a crash would.
    func end() { continuation.finish() }

    /// The next message the client sent (in order), waiting up to 5 s.
    func next() async throws -> JSONValue {
        for _ in 0..<500 {
            let message: JSONValue? = sent.withLock { sent in
                taken.withLock { taken in
                    guard taken < sent.count else { return nil }
                    taken += 1
                    return sent[taken - 1]
                }
            }
            if let message { return message }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ScriptError("the client sent nothing more")
    }

    /// The messages sent and not taken yet, without waiting.
    func pending() -> [JSONValue] {
        sent.withLock { sent in taken.withLock { Array(sent[$0...]) } }
    }

    /// Answers the next request, which must be `method`, with `result` (JSON text).
    @discardableResult
    func answer(_ method: String, result: String) async throws -> JSONValue {
        let request = try await next()
        guard request["method"]?.stringValue == method, let id = request["id"] else {
            throw ScriptError("expected a \(method) request, got \(request)")
        }
        push(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"#)
        return request
    }
}

/// A chat's JSON for scripts.
func chatJSON(_ id: String, revision: Int = 1, date: Int = 1000) -> String {
    #"{"id":"\#(id)","title":"\#(id)","createdAt":\#(date),"lastMessage":null,"lastMessageDate":\#(date),"unread":0,"revision":\#(revision)}"#
}

/// The setup of a scripted test: a client over a scripted engine, and that engine's first
/// connection.
struct ScriptedClient {
    let transport = ScriptedTransport()
    let client: ChatClient
    let engine: ScriptedConnection

    init() async throws {
        client = try await ChatClient(transport: transport)
        engine = try await transport.connection(0)
    }

    /// Subscribes, and answers the subscribe with `items` (chats' JSON) as `subscription`.
    /// Returns the subscription and the request the client sent.
    func subscribe(
        _ options: SubscriptionOptions = SubscriptionOptions(), acknowledgement: AcknowledgementMode = .manual,
        as subscription: String = "s1", items: [String]
    ) async throws -> (subscription: FeedSubscription, request: JSONValue) {
        let subscribing = Task { [client] in try await client.subscribe(options, acknowledgement: acknowledgement) }
        let request = try await engine.answer("feed.subscribe", result: subscribeResult(subscription, items: items))
        return (try await subscribing.value, request)
    }
}

/// Unread counters of zero, as JSON.
let zeroUnreadJSON = #"{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0}"#

/// A `feed.subscribe` result with the list `items` (chats' JSON).
func subscribeResult(_ subscription: String = "s1", total: Int? = nil, items: [String]) -> String {
    #"{"subscription":"\#(subscription)","seq":0,"count":\#(items.count),"total":\#(total ?? items.count),"items":[\#(items.joined(separator: ","))]}"#
}

/// A `feed.batch` notification; the four arrays are JSON text.
func feedBatchLine(
    _ subscription: String = "s1", seq: Int, count: Int, total: Int? = nil, unread: String = zeroUnreadJSON,
    deletes: String = "[]", inserts: String = "[]", moves: String = "[]", updates: String = "[]"
) -> String {
    #"{"jsonrpc":"2.0","method":"feed.batch","params":{"subscription":"\#(subscription)","seq":\#(seq),"count":\#(count),"total":\#(total ?? count),"unread":\#(unread),"deletes":\#(deletes),"inserts":\#(inserts),"moves":\#(moves),"updates":\#(updates)}}"#
}

/// A `feed.reset` notification with the list `items` (chats' JSON).
func feedResetLine(
    _ subscription: String = "s1", seq: Int, total: Int? = nil, unread: String = zeroUnreadJSON, items: [String] = []
) -> String {
    #"{"jsonrpc":"2.0","method":"feed.reset","params":{"subscription":"\#(subscription)","seq":\#(seq),"count":\#(items.count),"total":\#(total ?? items.count),"unread":\#(unread),"items":[\#(items.joined(separator: ","))]}}"#
}
