import SQLite

extension ChatDatabase {
    /// The statements of the event path, prepared when the store opens and reused by every event.
    struct PreparedStatements {
        /// A chat as one member sees it (chat, user).
        let fetchChat: Statement
        /// A chat's shared fields (`sharedSQL`).
        let fetchShared: Statement
        let chatExists: Statement
        let userExists: Statement
        let fetchMessage: Statement
        /// The latest non-deleted message of a chat by (sentAt, id): its last message.
        let latestMessage: Statement
        /// The chain's ends of chat ?1 (`historyEndsJoin`) and a membership's order date (null
        /// for a chat without members); no row when there is no such chat.
        let historyEnds: Statement
        /// A message's place in its chain (`ChainLink`), by `seq`.
        let chainLink: Statement
        /// A message and its place in its chain, by `seq`.
        let chainMessage: Statement
        /// Message ?1 follows message ?2 in its chat (a late post went in before it).
        let relinkMessage: Statement
        /// The `seq` of chat ?1's first mark after the position (sentAt ?2, id ?3).
        let markAfter: Statement
        /// Marks message ?4 (chat ?1, sentAt ?2, id ?3).
        let insertMark: Statement
        let insertChange: Statement
        /// Adds ?1 messages to the store's count (`countPostedMessages`).
        let countMessages: Statement
        let insertChat: Statement
        let setTitle: Statement
        /// Inserts nothing when the id is taken (`changedRowCount` is 0 then). The message's
        /// `arrival` is the sequence of the change-log row its post appends next; ?7 the message
        /// before it in its chat.
        let insertMessage: Statement
        let editMessage: Statement
        let deleteMessage: Statement
        let removeChat: Statement
        let insertMembership: Statement
        /// A member's unread, mute, revision and (when not null) read position.
        let updateMemberState: Statement
        /// The same and the member's list and pin order (the `membership_user` index's key).
        let updateMemberKey: Statement
        let setReadThrough: Statement
        /// Adds ?3 to the size of a member's list (user, list).
        let adjustListTotal: Statement
        /// Adds ?2 to the size of the list of each member of chat ?1.
        let adjustMemberListTotals: Statement
        /// A post (chat ?1, sender ?2, its change-log sequence ?3, sentAt ?4, `seq` ?6), for
        /// every member: one more unread and a new revision for each but the sender, who has read
        /// the chat through it (unread 0, read position ?3, and a new revision only when the row
        /// shows something new: an unread count that was not 0, or the post as the last message);
        /// for all, when the post is the chat's last message now (?5), the post's sentAt as the
        /// order date and the post as `last`; when it is the chat's newest message (?7), as `head`.
        let postToMembers: Statement
        /// The same for a chat without members, whose row holds its history's ends (chat ?1,
        /// last ?2, `seq` ?3, newest ?4).
        let postToChat: Statement
        /// The last message (?2) of chat ?1 while it has no members.
        let setChatLast: Statement
        /// A change of the chat's shared fields: a new revision (and order date ?3, last message
        /// ?6) for every member, one unread fewer for those whose read position is below `?4` (a
        /// deleted message's arrival); only those when `?5` is false (the shared fields stayed).
        let touchMembers: Statement
        /// A user's pinned chats of a list, top first (user, list).
        let pinnedChats: Statement

        init(_ db: Database) throws(SQLiteError) {
            fetchChat = try db.makeStatement(
                "SELECT \(ChatDatabase.chatColumns) FROM \(ChatDatabase.memberView) WHERE m.chat_id = ?1 AND m.user_id = ?2")
            fetchShared = try db.makeStatement(ChatDatabase.sharedSQL)
            chatExists = try db.makeStatement("SELECT 1 FROM chat WHERE id = ?1")
            userExists = try db.makeStatement("SELECT 1 FROM user WHERE id = ?1")
            fetchMessage = try db.makeStatement("""
                SELECT chat_id, sender, text, COALESCE(original_text, text), sent_at, edited_at, deleted, arrival, seq, previous
                FROM message WHERE id = ?1
                """)
            latestMessage = try db.makeStatement("""
                SELECT lm.id, lm.sender, lm.text, lm.sent_at
                FROM chat \(ChatDatabase.historyEndsJoin) JOIN message AS lm ON lm.seq = COALESCE(ends.last, chat.last)
                WHERE chat.id = ?1 LIMIT 1
                """)
            historyEnds = try db.makeStatement("""
                SELECT COALESCE(ends.head, chat.head), COALESCE(ends.last, chat.last), ends.last_message_date
                FROM chat \(ChatDatabase.historyEndsJoin) WHERE chat.id = ?1 LIMIT 1
                """)
            chainLink = try db.makeStatement("SELECT sent_at, id, deleted, previous FROM message WHERE seq = ?1")
            chainMessage = try db.makeStatement(
                "SELECT id, chat_id, sender, text, sent_at, edited_at, deleted, previous FROM message WHERE seq = ?1")
            relinkMessage = try db.makeStatement("UPDATE message SET previous = ?2 WHERE seq = ?1")
            markAfter = try db.makeStatement(
                "SELECT seq FROM message_mark WHERE chat_id = ?1 AND (sent_at, id) > (?2, ?3) ORDER BY sent_at, id LIMIT 1")
            insertMark = try db.makeStatement("INSERT INTO message_mark (chat_id, sent_at, id, seq) VALUES (?1, ?2, ?3, ?4)")
            insertChange = try db.makeStatement("INSERT INTO change_log (chat_id, kind, user_id) VALUES (?1, ?2, ?3)")
            countMessages = try db.makeStatement("UPDATE store_count SET messages = messages + ?1 WHERE id = 0")
            insertChat = try db.makeStatement("INSERT INTO chat (id, title, created_at) VALUES (?1, ?2, ?3)")
            setTitle = try db.makeStatement("UPDATE chat SET title = ?2 WHERE id = ?1")
            insertMessage = try db.makeStatement("""
                INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, edited_at, arrival, previous)
                VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'change_log'), 0) + 1, ?7)
                ON CONFLICT (id) DO NOTHING
                """)
            editMessage = try db.makeStatement("UPDATE message SET text = ?2, edited_at = ?3 WHERE id = ?1")
            deleteMessage = try db.makeStatement("UPDATE message SET deleted = 1 WHERE id = ?1")
            removeChat = try db.makeStatement("DELETE FROM chat WHERE id = ?1")
            insertMembership = try db.makeStatement("""
                INSERT INTO membership (chat_id, user_id, list, pin_order, last_message_date, unread, read_through, muted, revision, joined, chat_rowid, head, last)
                VALUES (?1, ?2, 'main', 0, ?3, 0, ?4, 0, ?4, ?4, (SELECT rowid FROM chat WHERE id = ?1), ?5, ?6)
                """)
            updateMemberState = try db.makeStatement("""
                UPDATE membership SET unread = ?3, muted = ?4, revision = ?5, read_through = COALESCE(?6, read_through)
                WHERE chat_id = ?1 AND user_id = ?2
                """)
            updateMemberKey = try db.makeStatement("""
                UPDATE membership SET unread = ?3, muted = ?4, revision = ?5, read_through = COALESCE(?6, read_through),
                    list = ?7, pin_order = ?8
                WHERE chat_id = ?1 AND user_id = ?2
                """)
            setReadThrough = try db.makeStatement("UPDATE membership SET read_through = ?3 WHERE chat_id = ?1 AND user_id = ?2")
            adjustListTotal = try db.makeStatement("""
                UPDATE list_counter SET total = total + ?3 WHERE user_id = ?1 AND list = ?2
                """)
            adjustMemberListTotals = try db.makeStatement("""
                UPDATE list_counter SET total = list_counter.total + ?2
                FROM (SELECT user_id, list FROM membership WHERE chat_id = ?1) AS share
                WHERE list_counter.user_id = share.user_id AND list_counter.list = share.list
                """)
            postToMembers = try db.makeStatement("""
                UPDATE membership SET
                    unread = IIF(user_id = ?2, 0, unread + 1),
                    read_through = IIF(user_id = ?2, ?3, read_through),
                    revision = IIF(user_id = ?2 AND unread = 0 AND NOT ?5, revision, ?3),
                    last_message_date = IIF(?5, ?4, last_message_date),
                    last = IIF(?5, ?6, last),
                    head = IIF(?7, ?6, head)
                WHERE chat_id = ?1
                """)
            postToChat = try db.makeStatement("UPDATE chat SET last = IIF(?2, ?3, last), head = IIF(?4, ?3, head) WHERE id = ?1")
            setChatLast = try db.makeStatement("UPDATE chat SET last = ?2 WHERE id = ?1 AND head IS NOT NULL")
            touchMembers = try db.makeStatement("""
                UPDATE membership SET revision = ?2, last_message_date = ?3, unread = unread - (read_through < ?4), last = ?6
                WHERE chat_id = ?1 AND (?5 OR read_through < ?4)
                """)
            pinnedChats = try db.makeStatement("""
                SELECT \(ChatDatabase.chatColumns) FROM \(ChatDatabase.memberView)
                WHERE m.user_id = ?1 AND m.list = ?2 AND m.pin_order > 0 ORDER BY m.pin_order DESC
                """)
        }
    }
}
