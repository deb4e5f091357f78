"""The judges citewise trains: their data (`support_data`), training and export (`train`), and their measurement on claims (`claims`)."""
