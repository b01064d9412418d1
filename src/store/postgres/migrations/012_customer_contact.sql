-- Issue 35: the email address a customer left for a reply while waiting for a person (not an identity: unverified).
ALTER TABLE customers ADD COLUMN contact_email text;
ALTER TABLE customers ADD COLUMN contact_email_at bigint;
