import ChatModel
import JSONCodec
import ListDiff

// The encoders of the wire shapes: each writes its compact JSON straight to bytes, without
// building a JSONValue (the decoders are in Chat+JSON.swift and WireFeedNotification.swift).

extension LastMessage {
    /// Appends `{"id","sender","text","sentAt"}`.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONOutput.appendString(id, to: &output)
        output.append(contentsOf: #","sender":"#.utf8)
        JSONOutput.appendString(sender, to: &output)
        output.append(contentsOf: #","text":"#.utf8)
        JSONOutput.appendString(text, to: &output)
        output.append(contentsOf: #","sentAt":"#.utf8)
        JSONOutput.appendInteger(sentAt, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}

extension Chat {
    /// Appends `{"id","title","createdAt","lastMessage","lastMessageDate","unread","revision","list",
    /// "pinned","pinOrder","muted"}` (`lastMessage` null when there is none).
    public func appendJSON(to output: inout [UInt8]) {
        appendSharedJSON(to: &output)
        appendMemberJSON(to: &output)
    }

    /// `appendJSON(to:)`, the chat's shared members (up to `lastMessageDate`) copied from `cache`
    /// when it holds them for a chat with the same shared fields: in a commit's fan-out the same
    /// chat, as each member sees it, is in every member's batch, and only `unread`, `revision`
    /// and the member's list, pin and mute differ.
    public func appendJSON(to output: inout [UInt8], cache: inout ChatJSONCache) {
        if let cached = cache.chat, cached.hasSharedFields(of: self) {
            output.append(contentsOf: cache.shared)
        } else {
            cache.shared.removeAll(keepingCapacity: true)
            appendSharedJSON(to: &cache.shared)
            cache.chat = self
            output.append(contentsOf: cache.shared)
        }
        appendMemberJSON(to: &output)
    }

    /// True when `other` has this chat's id and shared fields (title, dates, last message).
    func hasSharedFields(of other: Chat) -> Bool {
        id == other.id && createdAt == other.createdAt && lastMessageDate == other.lastMessageDate
            && title == other.title && lastMessage == other.lastMessage
    }

    /// Appends `{"id","title","createdAt","lastMessage","lastMessageDate"`: what every member sees.
    private func appendSharedJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONOutput.appendString(id, to: &output)
        output.append(contentsOf: #","title":"#.utf8)
        JSONOutput.appendString(title, to: &output)
        output.append(contentsOf: #","createdAt":"#.utf8)
        JSONOutput.appendInteger(createdAt, to: &output)
        output.append(contentsOf: #","lastMessage":"#.utf8)
        if let lastMessage {
            lastMessage.appendJSON(to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(contentsOf: #","lastMessageDate":"#.utf8)
        JSONOutput.appendInteger(lastMessageDate, to: &output)
    }

    /// Appends `,"unread","revision","list","pinned","pinOrder","muted"}`: the member's own.
    private func appendMemberJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #","unread":"#.utf8)
        JSONOutput.appendInteger(unread, to: &output)
        output.append(contentsOf: #","revision":"#.utf8)
        JSONOutput.appendInteger(revision, to: &output)
        output.append(contentsOf: list == .main ? #","list":"main""#.utf8 : #","list":"archive""#.utf8)
        output.append(contentsOf: pinned ? #","pinned":true"#.utf8 : #","pinned":false"#.utf8)
        output.append(contentsOf: #","pinOrder":"#.utf8)
        JSONOutput.appendInteger(pinOrder, to: &output)
        output.append(contentsOf: muted ? #","muted":true}"#.utf8 : #","muted":false}"#.utf8)
    }
}

/// The shared members of the last chat a batch encoded (see `Chat.appendJSON(to:cache:)`): one
/// per encoder, kept across calls.
public struct ChatJSONCache {
    /// The chat whose shared members `shared` holds.
    var chat: Chat?
    var shared: [UInt8] = []

    public init() {}
}

extension UnreadCounters {
    /// Appends `{"chats","messages","unmutedChats","unmutedMessages"}`.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"chats":"#.utf8)
        JSONOutput.appendInteger(chats, to: &output)
        output.append(contentsOf: #","messages":"#.utf8)
        JSONOutput.appendInteger(messages, to: &output)
        output.append(contentsOf: #","unmutedChats":"#.utf8)
        JSONOutput.appendInteger(unmutedChats, to: &output)
        output.append(contentsOf: #","unmutedMessages":"#.utf8)
        JSONOutput.appendInteger(unmutedMessages, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}

extension Message {
    /// Appends `{"id","chat","sender","text","sentAt","editedAt"}` (`editedAt` null when never
    /// edited).
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONOutput.appendString(id, to: &output)
        output.append(contentsOf: #","chat":"#.utf8)
        JSONOutput.appendString(chat, to: &output)
        output.append(contentsOf: #","sender":"#.utf8)
        JSONOutput.appendString(sender, to: &output)
        output.append(contentsOf: #","text":"#.utf8)
        JSONOutput.appendString(text, to: &output)
        output.append(contentsOf: #","sentAt":"#.utf8)
        JSONOutput.appendInteger(sentAt, to: &output)
        output.append(contentsOf: #","editedAt":"#.utf8)
        if let editedAt {
            JSONOutput.appendInteger(editedAt, to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(UInt8(ascii: "}"))
    }
}

extension EventResult {
    /// Appends the `result` of a write: the chat, `{"duplicate": bool}` or `{}` (docs/PROTOCOL.md).
    public func appendJSON(to output: inout [UInt8]) {
        switch self {
        case .chat(let chat): chat.appendJSON(to: &output)
        case .posted(let duplicate): output.append(contentsOf: (duplicate ? #"{"duplicate":true}"# : #"{"duplicate":false}"#).utf8)
        case .done: output.append(contentsOf: "{}".utf8)
        }
    }
}

extension RPCMessage {
    /// A result response whose `result` is written by `writeResult` (which must append exactly
    /// one JSON value).
    @inlinable
    public static func appendResultResponse(
        id: JSONValue, to output: inout [UInt8], writeResult: (inout [UInt8]) -> Void
    ) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.serialize(into: &output)
        output.append(contentsOf: #","result":"#.utf8)
        writeResult(&output)
        output.append(contentsOf: "}\n".utf8)
    }

    /// A notification whose `params` are written by `writeParams` (exactly one JSON value).
    @inlinable
    public static func appendNotification(
        method: String, to output: inout [UInt8], writeParams: (inout [UInt8]) -> Void
    ) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONOutput.appendString(method, to: &output)
        output.append(contentsOf: #","params":"#.utf8)
        writeParams(&output)
        output.append(contentsOf: "}\n".utf8)
    }
}

extension WireResults {
    /// Appends `[chat,…]`.
    @inlinable
    public static func appendChats(_ chats: some Sequence<Chat>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        var first = true
        for chat in chats {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            chat.appendJSON(to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Appends the `chats.list` result: `{"total","unread","items":[chat]}` (`total` and `unread` of the list).
    @inlinable
    public static func appendChatsList(
        total: Int, unread: UnreadCounters = UnreadCounters(), items: some Sequence<Chat>, to output: inout [UInt8]
    ) {
        output.append(contentsOf: #"{"total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
        output.append(contentsOf: #","unread":"#.utf8)
        unread.appendJSON(to: &output)
        output.append(contentsOf: #","items":"#.utf8)
        appendChats(items, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends the `messages.list` result: `{"items":[message],"nextCursor"}`, newest first as
    /// given; `nextCursor` continues `chat`'s listing after the page (null on the last page).
    public static func appendMessagesList(chat: String, page: MessagePage, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"items":["#.utf8)
        for (position, message) in page.items.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            message.appendJSON(to: &output)
        }
        output.append(contentsOf: #"],"nextCursor":"#.utf8)
        if let next = page.next {
            JSONOutput.appendString(MessageCursor.encode(chat: chat, after: next), to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends the `feed.subscribe` result: `{"subscription","seq":0,"count","total","unread","items":[chat]}`.
    @inlinable
    public static func appendFeedSubscribe(
        subscription: String, total: Int, unread: UnreadCounters, items: some Collection<Chat>,
        to output: inout [UInt8]
    ) {
        output.append(contentsOf: #"{"subscription":"#.utf8)
        JSONOutput.appendString(subscription, to: &output)
        output.append(contentsOf: #","seq":0,"count":"#.utf8)
        JSONOutput.appendInteger(Int64(items.count), to: &output)
        output.append(contentsOf: #","total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
        output.append(contentsOf: #","unread":"#.utf8)
        unread.appendJSON(to: &output)
        output.append(contentsOf: #","items":"#.utf8)
        appendChats(items, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `feed.reset` params: `{"subscription","seq","count","total","unread","items":[chat]}`.
    @inlinable
    public static func appendFeedReset(
        subscription: String, seq: Int64, count: Int, total: Int, unread: UnreadCounters = UnreadCounters(),
        items: some Sequence<Chat>, to output: inout [UInt8]
    ) {
        appendFeedHeader(subscription: subscription, seq: seq, count: count, total: total, unread: unread, to: &output)
        output.append(contentsOf: #","items":"#.utf8)
        appendChats(items, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `feed.batch` params: `subscription`, `seq`, `count`, `total`, `unread`, then the
    /// batch's `deletes`, `inserts` (`{"index","chat"}`), `moves` (`{"from","to"}`) and `updates`
    /// (docs/PROTOCOL.md, Applying a batch).
    public static func appendFeedBatch(
        subscription: String, seq: Int64, count: Int, total: Int, unread: UnreadCounters = UnreadCounters(),
        batch: Batch<Chat>, to output: inout [UInt8]
    ) {
        var cache = ChatJSONCache()
        appendFeedBatch(
            subscription: subscription, seq: seq, count: count, total: total, unread: unread, batch: batch, to: &output,
            cache: &cache)
    }

    /// `appendFeedBatch(subscription:seq:count:total:unread:batch:to:)`, the chats' shared members
    /// from `cache` when it holds them (a fan-out encodes the same chat for every member).
    public static func appendFeedBatch(
        subscription: String, seq: Int64, count: Int, total: Int, unread: UnreadCounters = UnreadCounters(),
        batch: Batch<Chat>, to output: inout [UInt8], cache: inout ChatJSONCache
    ) {
        appendFeedHeader(subscription: subscription, seq: seq, count: count, total: total, unread: unread, to: &output)
        // The batch's own object, its members after the header's: its `{` becomes a `,`.
        let batchStart = output.count
        batch.appendJSON(to: &output, cache: &cache)
        output[batchStart] = UInt8(ascii: ",")
    }

    @usableFromInline
    static func appendFeedHeader(
        subscription: String, seq: Int64, count: Int, total: Int, unread: UnreadCounters, to output: inout [UInt8]
    ) {
        output.append(contentsOf: #"{"subscription":"#.utf8)
        JSONOutput.appendString(subscription, to: &output)
        output.append(contentsOf: #","seq":"#.utf8)
        JSONOutput.appendInteger(seq, to: &output)
        output.append(contentsOf: #","count":"#.utf8)
        JSONOutput.appendInteger(Int64(count), to: &output)
        output.append(contentsOf: #","total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
        output.append(contentsOf: #","unread":"#.utf8)
        unread.appendJSON(to: &output)
    }
}
