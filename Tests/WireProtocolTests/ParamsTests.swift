import ChatModel
import Testing
import JSONCodec
@testable import WireProtocol

@Suite struct ParamsTests {
    private let now: Int64 = 1_700_000_000_000

    private func command(_ method: String, _ params: String?) throws(RPCError) -> WireCommand {
        let value = params.map { try! JSONValue(parsing: $0) }
        return try WireCommand(method: method, params: value, now: now)
    }

    /// The field named by the invalid-params error of `method` with `params`.
    private func invalidField(_ method: String, _ params: String?) -> String? {
        do {
            let decoded = try command(method, params)
            Issue.record("\(method) \(params ?? "nil") decoded as \(decoded)")
            return nil
        } catch {
            #expect(error.code == RPCErrorCode.invalidParams, "\(method) \(params ?? "nil"): \(error)")
            return error.data?["field"]?.stringValue
        }
    }

    @Test func writes() throws {
        #expect(try command("chat.create", #"{"chat":"c1","title":"Hi","createdAt":5}"#)
            == .write(.createChat(id: "c1", title: "Hi", createdAt: 5)))
        #expect(try command("chat.create", #"{"chat":"c1","title":""}"#)
            == .write(.createChat(id: "c1", title: "", createdAt: now)))
        #expect(try command("chat.create", #"{"chat":"c1","title":"t","createdAt":null}"#)
            == .write(.createChat(id: "c1", title: "t", createdAt: now)))
        #expect(try command("chat.rename", #"{"chat":"c1","title":"New"}"#) == .write(.renameChat(id: "c1", title: "New")))
        #expect(try command("chat.remove", #"{"chat":"c1"}"#) == .write(.removeChat(id: "c1")))
        #expect(try command("chat.markRead", #"{"chat":"c1"}"#) == .write(.markRead(id: "c1")))
        #expect(try command("message.post", #"{"chat":"c1","id":"m1","sender":"ann","text":"yo","sentAt":-3}"#)
            == .write(.postMessage(Message(id: "m1", chat: "c1", sender: "ann", text: "yo", sentAt: -3))))
        #expect(try command("message.post", #"{"chat":"c1","id":"m1","sender":"ann","text":"yo","sentAt":1.0E3}"#)
            == .write(.postMessage(Message(id: "m1", chat: "c1", sender: "ann", text: "yo", sentAt: 1000))))
        #expect(try command("message.edit", #"{"id":"m1","text":"fixed","editedAt":9}"#)
            == .write(.editMessage(id: "m1", text: "fixed", editedAt: 9)))
        #expect(try command("message.edit", #"{"id":"m1","text":"fixed"}"#)
            == .write(.editMessage(id: "m1", text: "fixed", editedAt: now)))
        #expect(try command("message.delete", #"{"id":"m1"}"#) == .write(.deleteMessage(id: "m1")))
    }

    @Test func writeErrorsNameTheField() {
        let post = #"{"chat":"c1","id":"m1","sender":"ann","text":"yo","sentAt":1}"#
        #expect(invalidField("message.post", post.replacingOccurrences(#""sentAt":1"#, "\"sentAt\":1.5")) == "sentAt")
        #expect(invalidField("message.post", post.replacingOccurrences(#""sentAt":1"#, "\"sentAt\":\"1\"")) == "sentAt")
        #expect(invalidField("message.post", post.replacingOccurrences(#""sentAt":1"#, "\"sentAt\":1e19")) == "sentAt")
        #expect(invalidField("message.post", post.replacingOccurrences(#""sentAt":1"#, "\"sentAt\":9223372036854775808")) == "sentAt")
        #expect(invalidField("message.post", post.replacingOccurrences(#""sentAt":1"#, "\"sentAt\":-9223372036854775809")) == "sentAt")
        #expect(invalidField("message.post", post.replacingOccurrences(#","sentAt":1"#, "")) == "sentAt")
        #expect(invalidField("message.post", post.replacingOccurrences(#""text":"yo""#, "\"text\":7")) == "text")
        #expect(invalidField("message.post", post.replacingOccurrences(#""sender":"ann""#, "\"sender\":null")) == "sender")
        #expect(invalidField("message.post", post.replacingOccurrences(#""id":"m1""#, "\"id\":\"\"")) == "id")
        #expect(invalidField("message.post", post.replacingOccurrences(#""chat":"c1""#, "\"chat\":[]")) == "chat")
        #expect(invalidField("message.post", post.replacingOccurrences(#""chat":"c1""#, "\"chat\":\"\(String(repeating: "x", count: 129))\"")) == "chat")
        #expect(invalidField("message.post", post.replacingOccurrences(#""chat":"c1""#, "\"chat\":\"e\\u0301\"")) == "chat")
        #expect(invalidField("message.post", post.replacingOccurrences("}", #","extra":1}"#)) == "extra")
        #expect(invalidField("message.post", "[\"c1\",\"m1\"]") == "params")
        #expect(invalidField("message.post", nil) == "id")
        #expect(invalidField("chat.create", #"{"title":"t"}"#) == "chat")
        #expect(invalidField("chat.create", #"{"chat":"c","title":1}"#) == "title")
        #expect(invalidField("chat.create", #"{"chat":"c","title":"t","createdAt":"now"}"#) == "createdAt")
        #expect(invalidField("chat.create", #"{"chat":"","title":"t"}"#) == "chat")
        #expect(invalidField("chat.rename", #"{"chat":"c"}"#) == "title")
        #expect(invalidField("chat.remove", #"{}"#) == "chat")
        #expect(invalidField("chat.markRead", #"{"chat":5}"#) == "chat")
        #expect(invalidField("message.edit", #"{"id":"m","text":"t","editedAt":true}"#) == "editedAt")
        #expect(invalidField("message.edit", #"{"id":"m"}"#) == "text")
        #expect(invalidField("message.delete", #"{"id":false}"#) == "id")
    }

    @Test func messagesAreReadable() throws {
        let error = try #require(throws: RPCError.self) {
            try command("message.post", #"{"chat":"c1","id":"m1","sender":"a","text":"t","sentAt":2.5}"#)
        }
        #expect(error.message == "invalid 'sentAt': must be an integer, not 2.5")
        let positional = try #require(throws: RPCError.self) { try command("chat.remove", #"["c1"]"#) }
        #expect(positional.message == "invalid 'params': chat.remove takes named parameters (an object); by-position arrays are not supported")
        let unknown = try #require(throws: RPCError.self) { try command("chat.remove", #"{"chat":"c","id":"x"}"#) }
        #expect(unknown.message == "invalid 'id': is not a parameter of chat.remove; expected chat")
        let range = try #require(throws: RPCError.self) { try command("chats.list", #"{"limit":-1}"#) }
        #expect(range.message == "invalid 'limit': must be between 0 and 10000, not -1")
        let huge = try #require(throws: RPCError.self) { try command("feed.ack", #"{"subscription":"s","seq":1e30}"#) }
        #expect(huge.message == "invalid 'seq': is 1e30, outside the 64-bit integer range")
    }

    @Test func unknownMethod() {
        #expect(throws: RPCError.unknownMethod("chat.explode")) { try command("chat.explode", nil) }
        #expect((try? command("chat.explode", nil)) == nil)
    }

    @Test func queries() throws {
        #expect(try command("chats.list", nil) == .listChats(ChatsListParams(offset: 0, limit: 100)))
        #expect(try command("chats.list", "{}") == .listChats(ChatsListParams(offset: 0, limit: 100)))
        #expect(try command("chats.list", #"{"offset":5,"limit":0}"#) == .listChats(ChatsListParams(offset: 5, limit: 0)))
        #expect(try command("chats.list", #"{"limit":10000}"#) == .listChats(ChatsListParams(offset: 0, limit: 10_000)))
        #expect(try command("chats.locate", #"{"ids":["a","b","a"]}"#) == .locateChats(ChatsLocateParams(ids: ["a", "b", "a"])))
        #expect(try command("messages.list", #"{"chat":"c"}"#) == .listMessages(MessagesListParams(chat: "c", before: nil, limit: 50)))
        #expect(try command("messages.list", #"{"chat":"c","before":99,"limit":3}"#)
            == .listMessages(MessagesListParams(chat: "c", before: 99, limit: 3)))
        let cursor = MessageCursor.encode(chat: "c", after: MessagePosition(sentAt: -7, id: "m1"))
        #expect(try command("messages.list", #"{"chat":"c","cursor":"\#(cursor)","before":5}"#)
            == .listMessages(MessagesListParams(chat: "c", before: 5, after: MessagePosition(sentAt: -7, id: "m1"), limit: 50)))
        #expect(try command("feed.subscribe", nil) == .subscribe(FeedSubscribeParams(limit: nil, maxInFlight: nil)))
        #expect(try command("feed.subscribe", #"{"limit":20,"maxInFlight":0}"#) == .subscribe(FeedSubscribeParams(limit: 20, maxInFlight: 0)))
        #expect(try command("feed.subscribe", #"{"known":[{"id":"b","revision":7},{"id":"a","revision":-1}]}"#)
            == .subscribe(FeedSubscribeParams(known: [KnownRow(id: "b", revision: 7), KnownRow(id: "a", revision: -1)])))
        #expect(try command("feed.subscribe", #"{"known":[]}"#) == .subscribe(FeedSubscribeParams(known: [])))
        #expect(try command("feed.subscribe", #"{"known":null}"#) == .subscribe(FeedSubscribeParams()))
        let most = "{\"known\":[" + (0..<10_000).map { "{\"id\":\"c\($0)\",\"revision\":1}" }.joined(separator: ",") + "]}"
        #expect(try command("feed.subscribe", most) == .subscribe(FeedSubscribeParams(known: (0..<10_000).map { KnownRow(id: "c\($0)", revision: 1) })))
        #expect(try command("feed.ack", #"{"subscription":"s1","seq":0}"#) == .ack(FeedAckParams(subscription: "s1", seq: 0)))
        #expect(try command("feed.unsubscribe", #"{"subscription":"s1"}"#) == .unsubscribe(FeedUnsubscribeParams(subscription: "s1")))
        #expect(try command("server.stats", nil) == .stats)
        #expect(try command("server.stats", "{}") == .stats)
    }

    @Test func queryErrorsNameTheField() {
        #expect(invalidField("chats.list", #"{"offset":-1}"#) == "offset")
        #expect(invalidField("chats.list", #"{"offset":"0"}"#) == "offset")
        #expect(invalidField("chats.list", #"{"limit":10001}"#) == "limit")
        #expect(invalidField("chats.list", #"{"limit":1.5}"#) == "limit")
        #expect(invalidField("chats.list", #"{"count":1}"#) == "count")
        #expect(invalidField("chats.locate", nil) == "ids")
        #expect(invalidField("chats.locate", #"{"ids":[]}"#) == "ids")
        #expect(invalidField("chats.locate", #"{"ids":"a"}"#) == "ids")
        #expect(invalidField("chats.locate", #"{"ids":["a",2]}"#) == "ids[1]")
        let tooMany = "{\"ids\":[" + Array(repeating: "\"a\"", count: 10_001).joined(separator: ",") + "]}"
        #expect(invalidField("chats.locate", tooMany) == "ids")
        #expect(invalidField("messages.list", #"{}"#) == "chat")
        #expect(invalidField("messages.list", #"{"chat":"c","before":"x"}"#) == "before")
        #expect(invalidField("messages.list", #"{"chat":"c","limit":-5}"#) == "limit")
        #expect(invalidField("messages.list", #"{"chat":"c","limit":0}"#) == "limit")
        #expect(invalidField("messages.list", #"{"chat":"c","cursor":5}"#) == "cursor")
        #expect(invalidField("messages.list", #"{"chat":"c","cursor":"AAAA"}"#) == "cursor")
        let otherChats = MessageCursor.encode(chat: "d", after: MessagePosition(sentAt: 5, id: "m"))
        #expect(invalidField("messages.list", #"{"chat":"c","cursor":"\#(otherChats)"}"#) == "cursor")
        #expect(invalidField("feed.subscribe", #"{"limit":0}"#) == "limit")
        #expect(invalidField("feed.subscribe", #"{"maxInFlight":-1}"#) == "maxInFlight")
        #expect(invalidField("feed.subscribe", #"{"maxInFlight":true}"#) == "maxInFlight")
        #expect(invalidField("feed.subscribe", #"[5]"#) == "params")
        #expect(invalidField("feed.subscribe", #"{"known":{"id":"a","revision":1}}"#) == "known")
        #expect(invalidField("feed.subscribe", #"{"known":["a"]}"#) == "known[0]")
        #expect(invalidField("feed.subscribe", #"{"known":[{"id":"a","revision":1},{"id":"b"}]}"#) == "known[1].revision")
        #expect(invalidField("feed.subscribe", #"{"known":[{"id":1,"revision":1}]}"#) == "known[0].id")
        #expect(invalidField("feed.subscribe", #"{"known":[{"id":"a","revision":1.5}]}"#) == "known[0].revision")
        #expect(invalidField("feed.subscribe", #"{"known":[{"id":"a","revision":1,"title":"x"}]}"#) == "known[0].title")
        let tooManyKnown = "{\"known\":[" + Array(repeating: #"{"id":"a","revision":1}"#, count: 10_001).joined(separator: ",") + "]}"
        #expect(invalidField("feed.subscribe", tooManyKnown) == "known")
        #expect(invalidField("feed.ack", #"{"seq":1}"#) == "subscription")
        #expect(invalidField("feed.ack", #"{"subscription":"s"}"#) == "seq")
        #expect(invalidField("feed.ack", #"{"subscription":"s","seq":-1}"#) == "seq")
        #expect(invalidField("feed.ack", #"{"subscription":"s","seq":0.5}"#) == "seq")
        #expect(invalidField("feed.unsubscribe", #"{"subscription":1}"#) == "subscription")
        #expect(invalidField("server.stats", #"{"verbose":true}"#) == "verbose")
    }
}

private extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
