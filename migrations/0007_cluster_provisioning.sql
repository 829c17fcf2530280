-- What the provisioning commands need to be pasted as they are (issue 14): the GCP project the
-- cluster lives in, the reservation its capacity comes from, and the VPC network of bare TPU VMs.
-- Empty means not set (the commands then name the field as a shell variable and list it).
ALTER TABLE clusters ADD COLUMN project text NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN reservation text NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN network text NOT NULL DEFAULT '';
