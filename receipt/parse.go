package receipt

import (
	"errors"
	"math"

	"github.com/prose-store/prose/canon"
)

// errReread stops the direct reader; Parse then reads the receipt again the
// general way, which names the problem.
var errReread = errors.New("read again")

// parseDirect reads a receipt straight into the struct, with no value model
// in between: the common case of Parse, which `prose receipts verify` and
// `prose log` run once per receipt. It accepts exactly what Decode followed
// by FromValue accepts and gives the same receipt (FuzzParseDirect checks
// both); on anything else it returns false and no reason, and Parse reads
// the receipt again to report it.
func parseDirect(data []byte) (*Receipt, bool) {
	rd, err := canon.NewReader(data)
	if err != nil {
		return nil, false
	}
	var r Receipt
	var seen uint16
	str := func(dst *string) error {
		s, err := rd.String()
		*dst = s
		return err
	}
	list := func(dst *[]string) error {
		out := []string{}
		err := rd.Array(func() error {
			s, err := rd.String()
			out = append(out, s)
			return err
		})
		*dst = out
		return err
	}
	object := func(dst *map[string]any) error {
		if rd.Next() != '{' {
			return errReread
		}
		v, err := rd.Value()
		if err != nil {
			return err
		}
		*dst = v.(map[string]any)
		return nil
	}
	err = rd.Object(func(key string) error {
		bit := uint16(0)
		var err error
		switch key {
		case "schema":
			bit, err = 1<<0, str(&r.Schema)
		case "hash_algorithm":
			var s string
			bit, err = 1<<1, str(&s)
			r.HashAlgorithm = canon.Algorithm(s)
		case "content_hash":
			bit, err = 1<<2, str(&r.ContentHash)
		case "node":
			bit, err = 1<<3, str(&r.Node)
		case "contract_fingerprint":
			bit, err = 1<<4, str(&r.ContractFingerprint)
		case "status":
			var s string
			bit, err = 1<<5, str(&s)
			r.Status = Status(s)
		case "wake":
			bit, err = 1<<6, directWake(rd, &r.Wake, str, list)
		case "input_fingerprints":
			bit, err = 1<<7, list(&r.InputFingerprints)
		case "fingerprints":
			bit = 1 << 8
			r.Fingerprints = map[string]string{}
			err = rd.Object(func(k string) error {
				s, err := rd.String()
				r.Fingerprints[k] = s
				return err
			})
		case "semantic_diff":
			bit, err = 1<<9, object(&r.SemanticDiff)
		case "sig":
			bit, err = 1<<10, object(&r.Sig)
		case "prev":
			bit = 1 << 11
			if rd.Next() == 'n' {
				err = rd.Null()
			} else {
				var s string
				err = str(&s)
				r.Prev = &s
			}
		case "cost":
			bit, err = 1<<12, directCost(rd, &r.Cost, str)
		default:
			return errReread
		}
		seen |= bit
		return err
	})
	if err != nil || seen != 1<<13-1 || rd.End() != nil || r.Schema != Schema {
		return nil, false
	}
	return &r, true
}

func directWake(rd *canon.Reader, w *Wake, str func(*string) error, list func(*[]string) error) error {
	var seen uint8
	err := rd.Object(func(key string) error {
		switch key {
		case "source":
			seen |= 1
			var s string
			err := str(&s)
			w.Source = WakeSource(s)
			return err
		case "refs":
			seen |= 2
			return list(&w.Refs)
		}
		return errReread
	})
	if err == nil && seen != 3 {
		return errReread
	}
	return err
}

func directCost(rd *canon.Reader, c *Cost, str func(*string) error) error {
	var seen uint8
	err := rd.Object(func(key string) error {
		switch key {
		case "provider":
			seen |= 1
			return str(&c.Provider)
		case "model":
			seen |= 2
			return str(&c.Model)
		case "surprise_cause":
			seen |= 4
			var s string
			err := str(&s)
			c.SurpriseCause = WakeSource(s)
			return err
		case "tokens":
			seen |= 8
			var got uint8
			err := rd.Object(func(key string) error {
				var dst *int64
				switch key {
				case "fresh":
					got |= 1
					dst = &c.Tokens.Fresh
				case "reused":
					got |= 2
					dst = &c.Tokens.Reused
				default:
					return errReread
				}
				v, err := rd.Value()
				if err != nil {
					return err
				}
				f, ok := v.(float64)
				if !ok || f != math.Trunc(f) || f < 0 || f > maxTokens {
					return errReread
				}
				*dst = int64(f)
				return nil
			})
			if err == nil && got != 3 {
				return errReread
			}
			return err
		}
		return errReread
	})
	if err == nil && seen != 15 {
		return errReread
	}
	return err
}
