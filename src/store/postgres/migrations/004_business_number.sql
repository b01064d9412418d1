-- The WhatsApp business number (Meta's phone_number_id) a customer last wrote to: replies go out from it.
ALTER TABLE customers ADD COLUMN business_number_id text;
