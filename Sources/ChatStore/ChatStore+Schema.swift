import SQLite

/// One step of the schema's history. The list only grows: a released step never changes.
struct Migration: Sendable {
    var version: Int
    var sql: String
}

extension ChatStore {
    /// Every schema version, oldest first. `PRAGMA user_version` holds the version of a database.
    static let migrations: [Migration] = [
        Migration(version: 1, sql: """
            CREATE TABLE chat (
                id TEXT NOT NULL PRIMARY KEY,
                title TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_message_id TEXT,
                last_message_sender TEXT,
                last_message_text TEXT,
                last_message_sent_at INTEGER,
                last_message_date INTEGER NOT NULL,
                unread INTEGER NOT NULL DEFAULT 0,
                revision INTEGER NOT NULL
            );
            CREATE INDEX chat_list_order ON chat (last_message_date DESC, id ASC);
            CREATE TABLE message (
                id TEXT NOT NULL PRIMARY KEY,
                chat_id TEXT NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
                sender TEXT NOT NULL,
                text TEXT NOT NULL,
                sent_at INTEGER NOT NULL,
                edited_at INTEGER,
                deleted INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX message_page ON message (chat_id, sent_at DESC, id DESC);
            CREATE TABLE change_log (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                chat_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'remove'))
            );
            """),
        // The text a message was first posted with, so that a repeated post is recognised even
        // after an edit. Messages from version 1 keep their current text as the original.
        Migration(version: 2, sql: """
            ALTER TABLE message ADD COLUMN original_text TEXT;
            UPDATE message SET original_text = text;
            """),
        // Counts of chats and non-deleted messages kept per write by triggers (in the writing
        // transaction, whichever process writes), so that stats read one row instead of
        // counting the tables.
        Migration(version: 3, sql: """
            CREATE TABLE store_count (
                id INTEGER PRIMARY KEY CHECK (id = 0),
                chats INTEGER NOT NULL,
                messages INTEGER NOT NULL
            );
            INSERT INTO store_count (id, chats, messages)
                VALUES (0, (SELECT COUNT(*) FROM chat), (SELECT COUNT(*) FROM message WHERE deleted = 0));
            CREATE TRIGGER store_count_chat_insert AFTER INSERT ON chat
                BEGIN UPDATE store_count SET chats = chats + 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_chat_delete AFTER DELETE ON chat
                BEGIN UPDATE store_count SET chats = chats - 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_insert AFTER INSERT ON message WHEN NEW.deleted = 0
                BEGIN UPDATE store_count SET messages = messages + 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_delete AFTER DELETE ON message WHEN OLD.deleted = 0
                BEGIN UPDATE store_count SET messages = messages - 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_deleted AFTER UPDATE OF deleted ON message
                WHEN (OLD.deleted = 0) <> (NEW.deleted = 0)
                BEGIN UPDATE store_count SET messages = messages + (CASE WHEN NEW.deleted = 0 THEN 1 ELSE -1 END) WHERE id = 0; END;
            """),
        // Change-log readers (daemons) and how far the log was pruned, so that the log stays
        // bounded and a reader that fell behind the pruning knows it (SPEC §4).
        Migration(version: 4, sql: """
            CREATE TABLE change_log_reader (
                id TEXT NOT NULL PRIMARY KEY,
                sequence INTEGER NOT NULL,
                seen_at INTEGER NOT NULL
            );
            CREATE TABLE change_log_pruned (
                only INTEGER PRIMARY KEY CHECK (only = 1),
                sequence INTEGER NOT NULL
            );
            INSERT INTO change_log_pruned VALUES (1, 0);
            """),
    ]

    static var latestSchemaVersion: Int { migrations.last!.version }

    /// Brings the schema to `latestSchemaVersion`, one transaction per step.
    static func migrate(_ db: Database, upTo target: Int = latestSchemaVersion) throws {
        // An up-to-date file opens without waiting for the write lock.
        if try schemaVersion(db) == target { return }
        while true {
            let done = try db.inTransaction(.immediate) { () throws -> Bool in
                let version = try schemaVersion(db)
                if version > latestSchemaVersion {
                    throw ChatStoreError.schemaTooNew(path: db.path, version: version, supported: latestSchemaVersion)
                }
                guard version < target, let step = migrations.first(where: { $0.version > version }) else {
                    return true
                }
                try db.execute(step.sql)
                try db.execute("PRAGMA user_version = \(step.version)")
                return false
            }
            if done { return }
        }
    }

    static func schemaVersion(_ db: Database) throws -> Int {
        try db.cachedStatement("PRAGMA user_version").fetchValue(Int.self) ?? 0
    }
}
