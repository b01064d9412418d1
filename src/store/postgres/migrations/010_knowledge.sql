-- Issue 36: the knowledge base. Articles, and their chunks (split along headings) with a full-text vector in the
-- article's language (`config`, a regconfig such as 'english') under a GIN index, and an optional embedding.
CREATE TABLE knowledge_articles (
  id text PRIMARY KEY,
  url text UNIQUE,
  title text NOT NULL,
  body text NOT NULL,
  format text NOT NULL,
  locale text,
  tags text[] NOT NULL DEFAULT '{}',
  origin text NOT NULL,
  etag text,
  last_modified text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX knowledge_articles_origin ON knowledge_articles (origin);

CREATE TABLE knowledge_chunks (
  article_id text NOT NULL REFERENCES knowledge_articles (id) ON DELETE CASCADE,
  position integer NOT NULL,
  heading_path text[] NOT NULL,
  text text NOT NULL,
  lang text,
  config regconfig NOT NULL,
  tsv tsvector NOT NULL,
  embedding real[],
  PRIMARY KEY (article_id, position)
);
CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING GIN (tsv);
