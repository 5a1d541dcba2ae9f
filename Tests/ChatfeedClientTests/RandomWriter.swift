import ChatfeedClient
import ChatModel
import TestSupport

/// Random writes through the client's typed calls, chosen so that each must succeed: new chats
/// (some created in the past), messages that bump a chat, late messages, edits, deleted (last)
/// messages, renames, reads, pins (one at a time and whole sets), archiving, mute, removed chats.
struct RandomWriter {
    private var chats: [String] = []
    private var messages: [(id: String, chat: String)] = []
    private var archived: Set<String> = []
    private var pinned: [ChatList: [String]] = [:]
    private var muted: Set<String> = []
    private var next = 0
    /// Writes made, by method.
    private(set) var written: [String: Int] = [:]
    /// Unpins, unarchives and unmutes as often as pins, archives and mutes (which otherwise are
    /// rarer: they need the random chat to be pinned, archived or muted).
    var undoesOften = false
    private var clock: Int64 = 1_000_000
    /// `maxPinnedChats` of the default configuration.
    private static let maxPinned = 5

    mutating func write(to client: ChatClient, using generator: inout SeededGenerator) async throws {
        written[try await writeOne(to: client, using: &generator), default: 0] += 1
    }

    /// Makes one write; returns its method.
    private mutating func writeOne(to client: ChatClient, using generator: inout SeededGenerator) async throws -> String {
        next += 1
        clock += Int64.random(in: 1...5, using: &generator)
        let roll = Int.random(in: 0..<100, using: &generator)
        if chats.count < 4 || roll < 10 {
            let id = "c\(next)"
            let createdAt = roll % 2 == 0 ? clock : clock - Int64.random(in: 0...5_000, using: &generator)
            try await client.createChat(id, title: roll % 3 == 0 ? "日本語のチャット \(next) 🎉" : "chat \(next)", createdAt: createdAt)
            chats.append(id)
            return "chat.create"
        }
        let chat = chats.randomElement(using: &generator)!
        let list: ChatList = archived.contains(chat) ? .archive : .main
        switch roll {
        case ..<52:
            let late = roll < 16
            let id = "m\(next)"
            let sentAt = late ? clock - Int64.random(in: 100...10_000, using: &generator) : clock
            let result = try await client.postMessage(chat: chat, id: id, sender: "ann", text: "hello \(next)", sentAt: sentAt)
            precondition(!result.duplicate)
            messages.append((id, chat))
            return "message.post"
        case ..<58 where !messages.isEmpty:
            try await client.editMessage(messages.randomElement(using: &generator)!.id, text: "edited \(next)")
            return "message.edit"
        case ..<66 where !messages.isEmpty:
            let index = Int.random(in: messages.indices, using: &generator)
            try await client.deleteMessage(messages.remove(at: index).id)
            return "message.delete"
        case ..<71:
            try await client.renameChat(chat, title: "renamed \(next)")
            return "chat.rename"
        case ..<80:
            try await client.markChatRead(chat)
            return "chat.markRead"
        case ..<84:  // (undoesOften: half the time a pinned chat is unpinned)
            let pins = pinned[list, default: []]
            let chat = !undoesOften || pins.isEmpty || Bool.random(using: &generator) ? chat : pins.randomElement(using: &generator)!
            if let position = pinned[list, default: []].firstIndex(of: chat) {
                pinned[list]!.remove(at: position)
                try await client.unpinChat(chat)
                return "chat.unpin"
            } else if pinned[list, default: []].count < Self.maxPinned {
                pinned[list, default: []].insert(chat, at: 0)
                try await client.pinChat(chat)
                return "chat.pin"
            }
            return "nothing (the list has its most pins)"
        case ..<86:  // the pins of the chosen chat's list
            let candidates = chats.filter { archived.contains($0) == (list == .archive) }.shuffled(using: &generator)
            let pins = Array(candidates.prefix(Int.random(in: 0...Self.maxPinned, using: &generator)))
            pinned[list] = pins
            try await client.setPinnedChats(pins, in: list)
            return "chat.setPinned"
        case ..<90:  // (undoesOften: half the time a chat of the archive comes back)
            let chat = !undoesOften || archived.isEmpty || Bool.random(using: &generator) ? chat : archived.sorted().randomElement(using: &generator)!
            let list: ChatList = archived.contains(chat) ? .archive : .main
            pinned[list]?.removeAll { $0 == chat }
            if archived.remove(chat) != nil {
                try await client.unarchiveChat(chat)
                return "chat.unarchive"
            }
            archived.insert(chat)
            try await client.archiveChat(chat)
            return "chat.archive"
        case ..<94:  // (undoesOften: half the time a muted chat is unmuted)
            let chat = !undoesOften || muted.isEmpty || Bool.random(using: &generator) ? chat : muted.sorted().randomElement(using: &generator)!
            if muted.remove(chat) != nil {
                try await client.unmuteChat(chat)
                return "chat.unmute"
            }
            muted.insert(chat)
            try await client.muteChat(chat)
            return "chat.mute"
        default:
            try await client.removeChat(chat)
            chats.removeAll { $0 == chat }
            messages.removeAll { $0.chat == chat }
            archived.remove(chat)
            muted.remove(chat)
            for list in ChatList.allCases { pinned[list]?.removeAll { $0 == chat } }
            return "chat.remove"
        }
    }
}
