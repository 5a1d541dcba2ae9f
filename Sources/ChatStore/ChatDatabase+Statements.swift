import SQLite

extension ChatDatabase {
    /// The statements of the event path, prepared when the store opens and reused by every event.
    struct PreparedStatements {
        let fetchChat: Statement
        let fetchMessage: Statement
        /// The latest non-deleted message of a chat by (sentAt, id).
        let latestMessage: Statement
        let insertChange: Statement
        let insertChat: Statement
        /// Writes every displayed column but those of the list-order index, which is left alone.
        let updateChat: Statement
        let updateChatAndKey: Statement
        /// Inserts nothing when the id is taken (`changedRowCount` is 0 then). The message's
        /// `arrival` is the sequence of the change-log row its post appends next.
        let insertMessage: Statement
        let editMessage: Statement
        let deleteMessage: Statement
        let removeChat: Statement
        /// Marks every message of a chat posted so far read (`read_through`, in the chat's row). O(log n).
        let markMessagesRead: Statement
        /// Adds deltas to a list's counters.
        let adjustCounters: Statement
        /// A list's pinned chats, top first.
        let pinnedChats: Statement

        init(_ db: Database) throws(SQLiteError) {
            fetchChat = try db.makeStatement("SELECT \(ChatDatabase.chatColumns) FROM chat WHERE id = ?1")
            fetchMessage = try db.makeStatement("""
                SELECT chat_id, sender, text, COALESCE(original_text, text), sent_at, edited_at, deleted,
                    deleted = 0 AND arrival > (SELECT read_through FROM chat WHERE chat.id = message.chat_id)
                FROM message WHERE id = ?1
                """)
            latestMessage = try db.makeStatement("""
                SELECT id, sender, text, sent_at FROM message
                WHERE chat_id = ?1 AND deleted = 0 ORDER BY sent_at DESC, id DESC LIMIT 1
                """)
            insertChange = try db.makeStatement("INSERT INTO change_log (chat_id, kind) VALUES (?1, ?2)")
            insertChat = try db.makeStatement("""
                INSERT INTO chat (\(ChatDatabase.chatColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                """)
            updateChat = try db.makeStatement("""
                UPDATE chat SET title = ?2, last_message_id = ?3, last_message_sender = ?4,
                    last_message_text = ?5, last_message_sent_at = ?6, unread = ?7, revision = ?8, muted = ?9
                WHERE id = ?1
                """)
            updateChatAndKey = try db.makeStatement("""
                UPDATE chat SET title = ?2, last_message_id = ?3, last_message_sender = ?4,
                    last_message_text = ?5, last_message_sent_at = ?6, unread = ?7, revision = ?8, muted = ?9,
                    last_message_date = ?10, list = ?11, pin_order = ?12
                WHERE id = ?1
                """)
            insertMessage = try db.makeStatement("""
                INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, edited_at, arrival)
                VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'change_log'), 0) + 1)
                ON CONFLICT (id) DO NOTHING
                """)
            editMessage = try db.makeStatement("UPDATE message SET text = ?2, edited_at = ?3 WHERE id = ?1")
            deleteMessage = try db.makeStatement("UPDATE message SET deleted = 1 WHERE id = ?1")
            removeChat = try db.makeStatement("DELETE FROM chat WHERE id = ?1")
            markMessagesRead = try db.makeStatement("""
                UPDATE chat SET read_through = COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'change_log'), 0) WHERE id = ?1
                """)
            adjustCounters = try db.makeStatement("""
                UPDATE list_counters SET total = total + ?2, chats = chats + ?3, messages = messages + ?4,
                    unmuted_chats = unmuted_chats + ?5, unmuted_messages = unmuted_messages + ?6
                WHERE list = ?1
                """)
            pinnedChats = try db.makeStatement("""
                SELECT \(ChatDatabase.chatColumns) FROM chat WHERE list = ?1 AND pin_order > 0 ORDER BY pin_order DESC
                """)
        }
    }
}
